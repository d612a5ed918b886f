import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends JSON lines to a log file, each with a single `write(2)` of the whole line, so that a
/// crash leaves at most one truncated last line and concurrent writers never interleave.
///
/// A line that cannot be written whole (a full disk writes part of it, then fails) is cut off
/// again, so that every line in the file stays complete.
package final class LogWriter: @unchecked Sendable {
    package let url: URL
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let lock = NSLock()
    /// The file's size after the last whole line (files only; under `lock`).
    private var size: off_t = 0

    /// Creates the folders and opens the file for appending.
    package init(url: URL) throws {
        try FileSystem.makeFolders(url.deletingLastPathComponent())
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw LogWriterError(path: url.path, reason: String(cString: strerror(errno)))
        }
        self.url = url
        ownsDescriptor = true
        size = lseek(descriptor, 0, SEEK_END)
    }

    /// Writes to standard output (`--log-dir -`), for a cluster's log pipeline. Each line is
    /// still one `write(2)`, so lines from one process never interleave.
    package init(standardOutput: Void) {
        descriptor = STDOUT_FILENO
        ownsDescriptor = false
        url = URL(fileURLWithPath: "/dev/stdout")
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Writes one line (a newline is added).
    package func write(_ line: String) throws {
        try write(bytes: Array(line.utf8))
    }

    /// Writes one line of bytes (a newline is added) with a single `write(2)`.
    package func write(bytes line: [UInt8]) throws {
        var bytes = line
        bytes.append(0x0A)
        try write(endedLine: bytes)
    }

    /// Writes one line that already ends with its newline (the run log builds its lines so,
    /// and adding the newline here copied every line).
    func write(endedLine bytes: [UInt8]) throws {
        precondition(bytes.last == 0x0A, "a log line ends with a newline")
        let failure = lock.withLock { () -> Int32? in
            let failure = bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
            guard ownsDescriptor else { return failure }
            if failure == nil {
                size += off_t(bytes.count)
            } else {
                // Whatever part of the line went out is taken back.
                _ = ftruncate(descriptor, size)
            }
            return failure
        }
        if let failure {
            throw LogWriterError(path: url.path, reason: String(cString: strerror(failure)))
        }
    }

    /// Whether the file was deleted or replaced since it was opened (its folder removed, say):
    /// lines written now would reach no one. Standard output is never gone.
    package var isGone: Bool {
        guard ownsDescriptor else { return false }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0 else { return true }
        guard opened.st_nlink > 0, stat(url.path, &named) == 0 else { return true }
        return opened.st_dev != named.st_dev || opened.st_ino != named.st_ino
    }

    /// Flushes the file to disk.
    package func sync() { fsync(descriptor) }
}

/// The log file could not be written.
package struct LogWriterError: Error, CustomStringConvertible {
    package let path: String
    package let reason: String
    package var description: String { "cannot write the log \(path): \(reason)" }
}
