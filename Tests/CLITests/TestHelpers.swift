import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Holds an exclusive flock on a file, as another courier run would.
final class FileLockHolder {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

enum URLEncoding {
    static func encode(_ text: String) -> String { URLBuilder.percentEncode(text) }
}
