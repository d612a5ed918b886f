import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    private let systemWrite = Darwin.write
#endif

/// Appends JSON lines to a log file, each with a single `write(2)` of the whole line, so that a
/// crash leaves at most one truncated last line and concurrent writers never interleave.
public final class LogWriter: @unchecked Sendable {
    public let url: URL
    private let descriptor: Int32
    private let lock = NSLock()

    /// Creates the folders and opens the file for appending.
    public init(url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw LogWriterError(path: url.path, reason: String(cString: strerror(errno)))
        }
        self.url = url
    }

    deinit { close(descriptor) }

    /// Writes one line (a newline is added).
    public func write(_ line: String) throws {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        try lock.withLock {
            var offset = 0
            // A regular file takes the whole line at once; the loop only guards against a
            // signal interrupting the call.
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes {
                    systemWrite(descriptor, $0.baseAddress, $0.count)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw LogWriterError(path: url.path, reason: String(cString: strerror(errno)))
                }
                offset += written
            }
        }
    }

    /// Flushes the file to disk.
    public func sync() { fsync(descriptor) }
}

/// The log file could not be written.
public struct LogWriterError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot write the log \(path): \(reason)" }
}
