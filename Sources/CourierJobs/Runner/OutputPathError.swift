import Foundation

/// A `save` path that would leave the output folder.
struct OutputPathError: Error, CustomStringConvertible {
    let path: String
    var description: String { "\"\(path)\" escapes outputDir" }
}
