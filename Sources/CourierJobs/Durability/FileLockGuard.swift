import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a file, held until the value is dropped (blocking: the holder is
/// another shard's flush, a few milliseconds).
final class FileLockGuard {
    private let descriptor: Int32

    init(_ url: URL) throws(FileError) {
        try FileSystem.makeFolders(url.deletingLastPathComponent())
        descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            throw FileError(path: url.path, action: "lock", code: errno)
        }
        while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
    }

    deinit { close(descriptor) }
}
