import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock that keeps two runs of one job from overlapping: an `flock` on the job's output
/// folder itself, whatever log folder either run uses (`--log-dir`, `--log-dir -`).
///
/// The folder is what two overlapping runs would corrupt (an older response renamed over a
/// newer one whose `ETag` the conditional state holds), so it is what is locked. Locking the
/// folder's own descriptor, not a file in it, leaves nothing that deleting a file undoes. A
/// run of the whole job takes it exclusively; a shard takes it shared, plus an exclusive lock
/// of its own shard (`outputDir/.courier/lock.shard-I-of-N`), so that shards run side by side
/// while an unsharded run beside any of them is refused. The kernel releases every lock when
/// the process ends, however it ends.
final class JobLock {
    /// What the error names: the output folder, or the shard's lock file.
    let url: URL
    private var descriptors: [Int32] = []

    /// Why a lock could not be taken.
    enum Failure: Error, CustomStringConvertible {
        /// Another process holds it; `url` is what is held.
        case held(URL, reason: String)
        case cannotOpen(URL, reason: String)

        var description: String {
            switch self {
            case .held(let url, let reason): "\(url.relativePath) is locked: \(reason)"
            case .cannotOpen(let url, let reason): "cannot lock \(url.relativePath): \(reason)"
            }
        }
    }

    /// Takes the job's lock for a run of `shard` (or the whole job).
    init(outputDir: URL, shard: Shard?) throws(Failure) {
        url = outputDir
        do {
            try FileSystem.makeFolders(outputDir)
        } catch {
            throw .cannotOpen(outputDir, reason: "\(error)")
        }
        let folder = try Self.openDescriptor(outputDir, flags: O_RDONLY | O_DIRECTORY)
        descriptors.append(folder)
        guard flock(folder, (shard == nil ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            release()
            throw .held(
                outputDir,
                reason: shard == nil
                    ? "a run of the whole job or of one of its shards is going on"
                    : "a run of the whole job is going on; a shard does not run beside it"
            )
        }
        guard let shard else { return }
        let file = outputDir.appendingPathComponent(".courier/lock.\(shard.fileTag)")
        do {
            try FileSystem.makeOwnFolder(file.deletingLastPathComponent())
        } catch {
            release()
            throw .cannotOpen(file, reason: "\(error)")
        }
        // A lock file deleted and made anew between our open and our flock would be another
        // file than the one the next run locks: take the lock, then check the name still
        // leads to the locked file.
        for _ in 0..<8 {
            let descriptor: Int32
            do {
                descriptor = try Self.openDescriptor(file, flags: O_RDWR | O_CREAT | O_NOFOLLOW)
            } catch {
                release()
                throw error
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                release()
                throw .held(file, reason: "another run of shard \(shard) of this job holds it")
            }
            if Self.sameFile(descriptor, file.path) {
                descriptors.append(descriptor)
                return
            }
            close(descriptor)
        }
        release()
        throw .cannotOpen(file, reason: "the lock file keeps being replaced")
    }

    /// Takes the lock of the job's log folder that a replay rebuilt from its log alone holds:
    /// it saves nothing, so no output folder says what it is, but it sends the job's writes
    /// and logs them in this history. Exclusive, so that it never runs beside a run of the job
    /// or another such replay, each of which would send a write the other is sending (trial
    /// GGG: a replay and a resume started together both made the failed night's write).
    init(history folder: URL) throws(Failure) {
        url = folder
        try lockHistory(folder, exclusive: true)
    }

    /// Adds a shared lock of the job's log folder (``init(history:)``) to a run's: runs and
    /// shards share it; a replay from the log alone takes it exclusively.
    func shareHistory(_ folder: URL) throws(Failure) {
        try lockHistory(folder, exclusive: false)
    }

    private func lockHistory(_ folder: URL, exclusive: Bool) throws(Failure) {
        do {
            try FileSystem.makeFolders(folder)
        } catch {
            throw .cannotOpen(folder, reason: "\(error)")
        }
        let descriptor = try Self.openDescriptor(folder, flags: O_RDONLY | O_DIRECTORY)
        guard flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            close(descriptor)
            release()
            throw .held(
                folder,
                reason: exclusive
                    ? "a run of the job, or another replay of its logs, is going on"
                    : "a replay of the job's log alone is going on")
        }
        descriptors.append(descriptor)
    }

    deinit { release() }

    private func release() {
        for descriptor in descriptors { close(descriptor) }
        descriptors = []
    }

    private static func openDescriptor(_ url: URL, flags: Int32) throws(Failure) -> Int32 {
        let descriptor = open(url.path, flags | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .cannotOpen(url, reason: String(cString: strerror(errno)))
        }
        return descriptor
    }

    private static func sameFile(_ descriptor: Int32, _ path: String) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(descriptor, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }
}
