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
///
/// The target's folder is opened once, when the replacement is made, and every later step
/// (writing, renaming, removing) works relative to that open folder (`openat`, `renameat`,
/// `unlinkat`), never by its path again: a folder swapped for a symbolic link while a body
/// downloads or a task waits to retry cannot move the file out of the folder that was checked.
/// ``temporary`` names the file through the open folder too (`/proc/self/fd/N/…` on Linux), so
/// a transport that writes to it by name lands in that same folder.
package struct FileReplacement: Sendable {
    /// The file being replaced (or created).
    package let target: URL
    /// The new version, until ``commit()`` renames it: a name that reaches it through the
    /// open folder where the system has one (Linux's `/proc/self/fd`), else its path.
    package let temporary: URL
    /// The temporary's path as the folder's path gives it (for messages and sweeping).
    package let temporaryPath: URL
    private let folder: OpenFolder
    private let temporaryName: String
    private let targetName: String

    /// Reserves a temporary name in the target's folder (the folder must exist).
    ///
    /// - Parameter tag: a word put in the temporary's name (`.name.TAG.XXXXXXXX.tmp`) that says
    ///   whose it is, so that the owner can tell its own leftovers from another writer's (the
    ///   job runner tags them with its job's lock; see `StaleTemporaries`). Letters and digits.
    package init(replacing target: URL, tag: String? = nil) throws(FileError) {
        #if DEBUG
            LoopThreadFileWork.note("create", target.path)
        #endif
        self.target = target
        targetName = target.lastPathComponent
        let folderURL = target.deletingLastPathComponent()
        let folderDescriptor = open(folderURL.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else {
            throw FileError(path: folderURL.path, action: "open the folder", code: errno)
        }
        folder = OpenFolder(folderDescriptor)
        var name: String
        var descriptor: Int32
        repeat {
            name =
                ".\(target.lastPathComponent).\(tag.map { "\($0)." } ?? "")\(UUID().uuidString.prefix(8)).tmp"
            descriptor = openat(
                folderDescriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        } while descriptor < 0 && errno == EEXIST
        temporaryPath = folderURL.appendingPathComponent(name)
        guard descriptor >= 0 else {
            throw FileError(path: temporaryPath.path, action: "create", code: errno)
        }
        close(descriptor)
        temporaryName = name
        let throughDescriptor = "/proc/self/fd/\(folderDescriptor)"
        #if os(Linux)
            temporary =
                access(throughDescriptor, F_OK) == 0
                ? URL(fileURLWithPath: throughDescriptor).appendingPathComponent(name)
                : temporaryPath
        #else
            temporary = temporaryPath
        #endif
    }

    /// Writes `data` as the whole new version.
    package func write(_ data: Data) throws(FileError) {
        #if DEBUG
            LoopThreadFileWork.note("write", target.path)
        #endif
        let descriptor = openat(
            folder.descriptor, temporaryName, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw FileError(path: temporaryPath.path, action: "write", code: errno)
        }
        defer { close(descriptor) }
        if let code = data.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: temporaryPath.path, action: "write", code: code)
        }
    }

    /// Makes the new version durable and puts it in the target's place. On failure the
    /// temporary file is removed and the target is as it was.
    ///
    /// - Parameter syncingFolder: whether the rename is made durable here (the folder
    ///   `fsync`ed). A caller that batches those syncs (one for many renames in a folder)
    ///   passes `false` and must sync the folder before it reports the save done.
    /// - Parameter mode: the new version's permission bits, whatever the umask and the old
    ///   version's; `nil` keeps an existing file's bits (a new one gets `0644` less the umask).
    package func commit(syncingFolder: Bool = true, mode: mode_t? = nil) throws(FileError) {
        #if DEBUG
            LoopThreadFileWork.note("commit", target.path)
        #endif
        let descriptor = openat(
            folder.descriptor, temporaryName, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            discard()
            throw FileError(path: temporaryPath.path, action: "open", code: code)
        }
        var failure: FileError?
        if fsync(descriptor) != 0 {
            failure = FileError(path: temporaryPath.path, action: "sync", code: errno)
        }
        var existing = stat()
        if failure == nil, let mode {
            _ = fchmod(descriptor, mode)
        } else if failure == nil,
            fstatat(folder.descriptor, targetName, &existing, AT_SYMLINK_NOFOLLOW) == 0,
            existing.st_mode & S_IFMT == S_IFREG
        {
            _ = fchmod(descriptor, existing.st_mode & 0o7777)
        }
        close(descriptor)
        // The folder must still be where its path leads: one moved away, or swapped for a
        // symbolic link, while the body was written would leave the file somewhere the
        // caller never chose and cannot find. Refused instead.
        var named = stat()
        var opened = stat()
        if failure == nil,
            stat(target.deletingLastPathComponent().path, &named) != 0
                || fstat(folder.descriptor, &opened) != 0
                || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino
        {
            failure = FileError(
                path: target.deletingLastPathComponent().path,
                action:
                    "save into the folder (it was moved or replaced while the file was written)",
                code: ESTALE)
        }
        if failure == nil,
            renameat(folder.descriptor, temporaryName, folder.descriptor, targetName) != 0
        {
            failure = FileError(path: target.path, action: "replace", code: errno)
        }
        if let failure {
            discard()
            throw failure
        }
        // Makes the rename durable.
        if syncingFolder { fsync(folder.descriptor) }
    }

    /// Removes the new version, leaving the target as it was.
    package func discard() {
        #if DEBUG
            LoopThreadFileWork.note("discard", target.path)
        #endif
        unlinkat(folder.descriptor, temporaryName, 0)
    }
}

/// A folder's descriptor, closed with the last copy of the replacement that opened it.
private final class OpenFolder: Sendable {
    let descriptor: Int32
    init(_ descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }
}
