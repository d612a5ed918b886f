import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a file beside the job's logs, so that overlapping cron runs of the
/// same job do not both run. The kernel releases it when the process ends, however it ends.
final class JobLock {
    let url: URL
    private let descriptor: Int32

    /// Takes the lock, or returns `nil` when another process holds it.
    init?(url: URL) throws {
        try FileSystem.makeFolders(url.deletingLastPathComponent())
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw LogWriterError(path: url.path, reason: String(cString: strerror(errno)))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.url = url
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
