import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes saved responses atomically and durably: a new temporary file in the same folder,
/// written whole and `fsync`ed, then `rename(2)`d over the target, then the folder synced.
///
/// A reader never sees half a file, a crash leaves the old version or the new one (and at most
/// a stray temporary), and replacing an existing file never deletes it first. Two saves to one
/// path each rename a complete file, so the last to finish wins whole. An existing file's
/// permission bits are kept.
enum OutputFile {
    static func write(_ data: Data, to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        try FileSystem.makeFolders(folder)
        let temporary = folder.appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw FileError(path: temporary.path, action: "create", code: errno)
        }
        var failure: FileError?
        if let code = data.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            failure = FileError(path: temporary.path, action: "write", code: code)
        } else if fsync(descriptor) != 0 {
            failure = FileError(path: temporary.path, action: "sync", code: errno)
        }
        var existing = stat()
        if failure == nil, stat(url.path, &existing) == 0 {
            _ = fchmod(descriptor, existing.st_mode & 0o7777)
        }
        close(descriptor)
        if failure == nil, rename(temporary.path, url.path) != 0 {
            failure = FileError(path: url.path, action: "replace", code: errno)
        }
        if let failure {
            unlink(temporary.path)
            throw failure
        }
        syncFolder(folder)
    }

    /// Makes the rename itself durable.
    private static func syncFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
