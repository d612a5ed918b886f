import Foundation

/// A `save` path that would leave the output folder, or lead to the job's own files.
struct OutputPathError: Error, CustomStringConvertible {
    let path: String
    var reason = "escapes outputDir"
    var description: String { "\"\(path)\" \(reason)" }
}
