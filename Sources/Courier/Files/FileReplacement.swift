import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new version of a file, written beside it under a temporary name and renamed over it whole.
///
/// ``commit()`` `fsync`s the new file, keeps an existing file's permission bits, `rename(2)`s it
/// over the target and syncs the folder. A reader never sees half a file, a crash leaves the old
/// version or the new one (and at most a stray `.name.XXXXXXXX.tmp`, or `.name.TAG.XXXXXXXX.tmp`
/// with a ``tag``), and the old file is never deleted first. A symbolic link at the target is
/// replaced, never written through.
package struct FileReplacement: Sendable {
    /// The file being replaced (or created).
    package let target: URL
    /// The new version, until ``commit()`` renames it.
    package let temporary: URL

    /// Reserves a temporary name in the target's folder (the folder must exist).
    ///
    /// - Parameter tag: a word put in the temporary's name (`.name.TAG.XXXXXXXX.tmp`) that says
    ///   whose it is, so that the owner can tell its own leftovers from another writer's (the
    ///   job runner tags them with its job's lock; see `StaleTemporaries`). Letters and digits.
    package init(replacing target: URL, tag: String? = nil) throws(FileError) {
        self.target = target
        let folder = target.deletingLastPathComponent()
        var temporary: URL
        var descriptor: Int32
        repeat {
            temporary = folder.appendingPathComponent(
                ".\(target.lastPathComponent).\(tag.map { "\($0)." } ?? "")\(UUID().uuidString.prefix(8)).tmp"
            )
            descriptor = open(
                temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        } while descriptor < 0 && errno == EEXIST
        guard descriptor >= 0 else {
            throw FileError(path: temporary.path, action: "create", code: errno)
        }
        close(descriptor)
        self.temporary = temporary
    }

    /// Writes `data` as the whole new version.
    package func write(_ data: Data) throws(FileError) {
        let descriptor = open(temporary.path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw FileError(path: temporary.path, action: "write", code: errno)
        }
        defer { close(descriptor) }
        if let code = data.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: temporary.path, action: "write", code: code)
        }
    }

    /// Makes the new version durable and puts it in the target's place. On failure the
    /// temporary file is removed and the target is as it was.
    package func commit() throws(FileError) {
        let descriptor = open(temporary.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            discard()
            throw FileError(path: temporary.path, action: "open", code: code)
        }
        var failure: FileError?
        if fsync(descriptor) != 0 {
            failure = FileError(path: temporary.path, action: "sync", code: errno)
        }
        var existing = stat()
        if failure == nil, lstat(target.path, &existing) == 0,
            existing.st_mode & S_IFMT == S_IFREG
        {
            _ = fchmod(descriptor, existing.st_mode & 0o7777)
        }
        close(descriptor)
        if failure == nil, rename(temporary.path, target.path) != 0 {
            failure = FileError(path: target.path, action: "replace", code: errno)
        }
        if let failure {
            discard()
            throw failure
        }
        Self.syncFolder(target.deletingLastPathComponent())
    }

    /// Removes the new version, leaving the target as it was.
    package func discard() {
        unlink(temporary.path)
    }

    /// Makes a rename in `folder` durable.
    private static func syncFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
