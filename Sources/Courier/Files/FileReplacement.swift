import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new version of a file, written beside it under a temporary name and renamed over it whole.
///
/// ``commit()`` `fsync`s the new file, keeps an existing file's permission bits (not its
/// set-user-ID, set-group-ID or sticky bits; a new file's are `0666` less the umask),
/// `rename(2)`s it over the target and syncs the folder. A reader never sees half a file, a
/// crash leaves the old
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
    /// open folder where the system has one (Linux's `/proc/self/fd`), else its path. (Made
    /// as a file's URL outright: without that word Foundation asks the file system whether
    /// the path is a folder, a lookup through `/proc` for every save.)
    package var temporary: URL {
        #if os(Linux)
            if FileReplacement.procFolders {
                return URL(
                    fileURLWithPath: "/proc/self/fd/\(folder.descriptor)/\(temporaryName)",
                    isDirectory: false)
            }
        #endif
        return temporaryPath
    }
    /// The temporary's path as the folder's path gives it (for messages and sweeping).
    package var temporaryPath: URL {
        URL(fileURLWithPath: "\(folderPath)/\(temporaryName)", isDirectory: false)
    }
    private let folder: OpenFolder
    /// The folder's path, as text: a save is many small steps, and each `URL` made or taken
    /// apart on the way cost more than the system calls.
    package let folderPath: String
    private let temporaryName: String
    private let targetName: String

    /// Whether this system names open folders under `/proc/self/fd` (looked at once).
    private static let procFolders = access("/proc/self/fd", F_OK) == 0

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
        let path = target.path
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        targetName = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let folderDescriptor = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else {
            throw FileError(path: folderPath, action: "open the folder", code: errno)
        }
        folder = OpenFolder(folderDescriptor)
        var name: String
        var descriptor: Int32
        repeat {
            name = ".\(targetName).\(tag.map { "\($0)." } ?? "")\(Self.randomSuffix()).tmp"
            descriptor = openat(
                folderDescriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o666)
        } while descriptor < 0 && errno == EEXIST
        temporaryName = name
        guard descriptor >= 0 else {
            throw FileError(path: "\(folderPath)/\(name)", action: "create", code: errno)
        }
        // An existing file's permission bits, taken now, while the new file is open: a commit
        // that needs no sync then opens nothing (group commit renames whole batches on one
        // thread, and every system call there holds up the batch). Not its set-user-ID,
        // set-group-ID or sticky bits: new content never inherits a privilege.
        var existing = stat()
        if fstatat(folderDescriptor, targetName, &existing, AT_SYMLINK_NOFOLLOW) == 0,
            existing.st_mode & S_IFMT == S_IFREG
        {
            _ = fchmod(descriptor, existing.st_mode & 0o777)
        }
        close(descriptor)
    }

    /// Eight hexadecimal digits for a temporary's name (`O_EXCL` settles any clash).
    private static func randomSuffix() -> String {
        let value = UInt32.random(in: 0...UInt32.max)
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - text.utf8.count) + text
    }

    /// Writes `data` as the whole new version.
    package func write(_ data: Data) throws(FileError) {
        #if DEBUG
            LoopThreadFileWork.note("write", target.path)
        #endif
        // Emptied only when it has bytes: ``POSIX/emptyIfNeeded(_:)`` says why not `O_TRUNC`.
        let descriptor = openat(
            folder.descriptor, temporaryName, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw FileError(path: temporaryPath.path, action: "write", code: errno)
        }
        defer { close(descriptor) }
        if let code = POSIX.emptyIfNeeded(descriptor) {
            throw FileError(path: temporaryPath.path, action: "write", code: code)
        }
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
    /// - Parameter syncingFile: `false` when the caller made the new version's bytes durable
    ///   already (``syncFileSystem()``, one sync for many files).
    /// - Parameter mode: the new version's permission bits, whatever the umask and the old
    ///   version's; `nil` keeps the permission bits the existing file had when this
    ///   replacement was made, less set-user-ID, set-group-ID and sticky (a new one gets
    ///   `0666` less the umask, as `curl -o` and `cp` give).
    /// - Parameter checkingFolder: `false` when the caller has just checked the folder
    ///   (``folderMoved()``) for a batch of replacements into it.
    package func commit(
        syncingFile: Bool = true, syncingFolder: Bool = true, mode: mode_t? = nil,
        checkingFolder: Bool = true
    ) throws(FileError) {
        #if DEBUG
            LoopThreadFileWork.note("commit", target.path)
        #endif
        // The existing file's bits were copied when the new version was made: the new version
        // is opened only to sync it or to set the bits asked for.
        if syncingFile || mode != nil {
            let descriptor = openat(
                folder.descriptor, temporaryName, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                let code = errno
                discard()
                throw FileError(path: temporaryPath.path, action: "open", code: code)
            }
            var failure: FileError?
            if syncingFile, fsync(descriptor) != 0 {
                failure = FileError(path: temporaryPath.path, action: "sync", code: errno)
            }
            if failure == nil, let mode { _ = fchmod(descriptor, mode) }
            close(descriptor)
            if let failure {
                discard()
                throw failure
            }
        }
        if checkingFolder, let failure = folderMoved() {
            discard()
            throw failure
        }
        guard renameat(folder.descriptor, temporaryName, folder.descriptor, targetName) == 0
        else {
            let failure = FileError(path: target.path, action: "replace", code: errno)
            discard()
            throw failure
        }
        // Makes the rename durable.
        if syncingFolder { syncFolder() }
    }

    /// Why the new version must not be renamed into its folder, if it must not: the folder
    /// must still be where its path leads. One moved away, or swapped for a symbolic link,
    /// while the body was written would leave the file somewhere the caller never chose and
    /// cannot find. A caller that commits many replacements into one folder checks once and
    /// commits each with `checkingFolder: false`.
    package func folderMoved() -> FileError? {
        var named = stat()
        guard stat(folderPath, &named) == 0,
            UInt64(named.st_dev) == folder.identity.device,
            UInt64(named.st_ino) == folder.identity.inode
        else {
            return FileError(
                path: folderPath,
                action:
                    "save into the folder (it was moved or replaced while the file was written)",
                code: ESTALE)
        }
        return nil
    }

    /// The folder the new version goes into, as the system knows it (device and inode): the
    /// replacements of one batch that share a folder share its sync.
    package var folderIdentity: FolderIdentity { folder.identity }

    /// A folder as the system knows it.
    package struct FolderIdentity: Hashable, Sendable {
        package let device: UInt64
        package let inode: UInt64
    }

    /// Makes the bytes of every file written on the folder's file system durable at once,
    /// this new version's among them (`syncfs(2)`): one sync for a batch of replacements,
    /// which then ``commit(syncingFile:syncingFolder:mode:)`` without a sync of their own.
    /// Where the system has no `syncfs`, the new version's own `fsync`.
    package func syncFileSystem() throws(FileError) {
        #if os(Linux)
            if let syncfs = FileSystemSync.syncfs {
                guard syncfs(folder.descriptor) == 0 else {
                    throw FileError(
                        path: folderPath, action: "sync the file system of", code: errno)
                }
                return
            }
        #endif
        try syncBytes()
    }

    /// Makes the new version's bytes durable: its own `fsync`.
    package func syncBytes() throws(FileError) {
        let descriptor = openat(
            folder.descriptor, temporaryName, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw FileError(path: temporaryPath.path, action: "open", code: errno)
        }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 {
            throw FileError(path: temporaryPath.path, action: "sync", code: errno)
        }
    }

    /// Makes the renames made in the folder durable (its `fsync`).
    package func syncFolder() {
        fsync(folder.descriptor)
    }

    /// Removes the new version, leaving the target as it was.
    package func discard() {
        #if DEBUG
            LoopThreadFileWork.note("discard", target.path)
        #endif
        unlinkat(folder.descriptor, temporaryName, 0)
    }
}

/// `syncfs(2)`, which Glibc's module leaves out (it needs `_GNU_SOURCE`): looked up once, by
/// name, in the C library the process has loaded.
private enum FileSystemSync {
    typealias Function = @convention(c) (Int32) -> Int32

    #if os(Linux)
        static let syncfs: Function? = dlsym(nil, "syncfs").map {
            unsafeBitCast($0, to: Function.self)
        }
    #endif
}

/// A folder's descriptor, closed with the last copy of the replacement that opened it.
private final class OpenFolder: Sendable {
    let descriptor: Int32
    /// The folder as the system knows it, read once: a descriptor names the same folder for
    /// as long as it is open.
    let identity: FileReplacement.FolderIdentity

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        var status = stat()
        identity =
            fstat(descriptor, &status) == 0
            ? FileReplacement.FolderIdentity(
                device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
            : FileReplacement.FolderIdentity(device: 0, inode: 0)
    }
    deinit { close(descriptor) }
}
