import Courier
import Foundation

/// Writes saved responses atomically and durably, through a ``FileReplacement``: a new
/// temporary file in the same folder, written whole and `fsync`ed, then renamed over the target.
///
/// Two saves to one path each rename a complete file, so the last to finish wins whole.
enum OutputFile {
    /// - Parameter tag: the writer's tag for the temporary's name (``FileReplacement``).
    /// - Parameter syncingFolder: `false` when the caller syncs the folder itself, before it
    ///   reports the save done (``FolderSyncs``).
    static func write(
        _ data: Data, to url: URL, tag: String? = nil, syncingFolder: Bool = true
    ) throws(FileError) {
        try FileSystem.makeFolders(url.deletingLastPathComponent())
        let replacement = try FileReplacement(replacing: url, tag: tag)
        do {
            try replacement.write(data)
        } catch {
            replacement.discard()
            throw error
        }
        try replacement.commit(syncingFolder: syncingFolder)
    }
}
