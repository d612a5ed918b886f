import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file made by appending to a temporary beside it, then put in place whole by a rename:
/// a records task's part (``RecordsPart``), a capturing task's kept values
/// (``KeptCaptures``). Until then the file, if there is one, is as it was; a killed run's
/// temporary carries the run's tag, and the next run sweeps it (``StaleTemporaries``).
struct AppendingTemporary {
    private var replacement: FileReplacement?
    private var descriptor: Int32
    private let target: URL

    /// Makes the temporary beside `target` (its folder must exist), tagged `tag`.
    init(replacing target: URL, tag: String?) throws(FileError) {
        let replacement = try FileReplacement(replacing: target, tag: tag)
        let descriptor = open(
            replacement.temporary.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            replacement.discard()
            throw FileError(path: replacement.temporaryPath.path, action: "open", code: code)
        }
        self.replacement = replacement
        self.descriptor = descriptor
        self.target = target
    }

    /// Appends `bytes` whole (a short write goes on, an interrupted one is made again).
    func append(_ bytes: [UInt8]) throws(FileError) {
        if let code = bytes.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: target.path, action: "write", code: code)
        }
    }

    /// Puts the file in place: `fsync`ed and renamed over the target; its folder is left for
    /// the caller to sync (``FolderSyncs``) unless `syncingFolder`.
    mutating func commit(syncingFolder: Bool = false) throws(FileError) {
        POSIX.close(&descriptor)
        let replacement = self.replacement
        self.replacement = nil
        try replacement?.commit(syncingFolder: syncingFolder)
    }

    /// Removes the temporary: the file stays as it was.
    mutating func discard() {
        POSIX.close(&descriptor)
        replacement?.discard()
        replacement = nil
    }
}
