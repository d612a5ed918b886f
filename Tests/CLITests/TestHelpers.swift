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

/// Reads a pipe to its end on a thread of its own, off the cooperative pool.
enum OffPoolRead {
    static func all(_ pipe: Pipe) async throws -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
    }
}
