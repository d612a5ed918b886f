import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Appends JSON lines to a log file, whole lines only, so that a crash leaves at most one
/// truncated last line and concurrent writers never interleave.
///
/// A writer made with `batching` keeps lines for a moment and writes those that gathered with
/// one `write(2)`, off the caller's thread: a job's tasks run on the transport's event loops,
/// and a system call per line there held every transfer of the loop up. The lines wait at
/// most ``batchDelay`` (longer only on a machine too loaded to run the flush), so a `kill -9`
/// loses the lines of the last few milliseconds and `--resume` sends those tasks again. A line
/// written with `now` (a request that may not be sent twice, the run's end) is written before
/// `write` returns, after every line before it. Without `batching`, every line is written so.
///
/// A line that cannot be written whole (a full disk writes part of it, then fails) is cut off
/// again, so that every line in the file stays complete; the first such failure is kept in
/// ``failure``.
final class LogWriter: @unchecked Sendable {
    let url: URL
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let batching: Bool
    /// Held while the file is written, and taken before `lock` when both are: batches reach the
    /// file in the order they were taken.
    private let fileLock = AdaptiveMutex()
    /// The file's size after the last whole line (files only; under `fileLock`).
    private var size: off_t = 0
    /// The batch being written (under `fileLock`), kept to reuse its storage.
    private var writing: [UInt8] = []
    /// Guards `waiting` and `firstFailure`.
    private let lock = AdaptiveMutex()
    /// Lines not yet written, in order (under `lock`).
    private var waiting: [UInt8] = []
    private var firstFailure: String?
    private let flushQueue = DispatchQueue(label: "courier.log-flush")

    /// How long a line waits for others before its batch is written.
    static let batchDelay: DispatchTimeInterval = .milliseconds(2)
    /// Lines waiting beyond this many bytes are written by the writer that adds to them.
    static let batchLimit = 256 << 10

    /// Creates the folders and opens the file for appending.
    /// - Parameter batching: gather lines and write them off the caller's thread (see above).
    init(url: URL, batching: Bool = false) throws {
        try FileSystem.makeFolders(url.deletingLastPathComponent())
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            // Whose the folder is, when it is not this run's user's (a try as root made it).
            let hint = code == EACCES ? FileError.ownerHint(url.path) : ""
            throw LogWriterError(path: url.path, reason: String(cString: strerror(code)) + hint)
        }
        self.url = url
        self.batching = batching
        ownsDescriptor = true
        size = lseek(descriptor, 0, SEEK_END)
    }

    /// Writes to standard output (`--log-dir -`), for a cluster's log pipeline. Lines are
    /// still written whole, so lines from one process never interleave.
    init(standardOutput: Void, batching: Bool = false) {
        descriptor = STDOUT_FILENO
        ownsDescriptor = false
        self.batching = batching
        url = URL(fileURLWithPath: "/dev/stdout")
    }

    deinit {
        flush()
        if ownsDescriptor { close(descriptor) }
    }

    /// Writes one line (a newline is added).
    func write(_ line: String) throws {
        try write(bytes: Array(line.utf8))
    }

    /// Writes one line of bytes (a newline is added), now.
    func write(bytes line: [UInt8]) throws {
        var bytes = line
        bytes.append(0x0A)
        try write(endedLine: bytes, now: true)
    }

    /// Writes one line that already ends with its newline (the run log builds its lines so,
    /// and adding the newline here copied every line).
    /// - Parameter now: write it, and every line before it, before returning, even when
    ///   batching; throws when it could not be written.
    func write(endedLine bytes: [UInt8], now: Bool = false) throws {
        precondition(bytes.last == 0x0A, "a log line ends with a newline")
        guard batching, !now else {
            if let failure = flush(then: bytes) {
                throw LogWriterError(path: url.path, reason: String(cString: strerror(failure)))
            }
            return
        }
        let (first, full) = lock.withLock { () -> (Bool, Bool) in
            let first = waiting.isEmpty
            waiting.append(contentsOf: bytes)
            return (first, waiting.count >= Self.batchLimit)
        }
        if full {
            flush()
        } else if first {
            flushQueue.asyncAfter(deadline: .now() + Self.batchDelay) { [weak self] in
                self?.flush()
            }
        }
    }

    /// Writes every waiting line now.
    func flush() {
        _ = flush(then: nil)
    }

    /// The first line that could not be written, if one could not: the file then lacks it.
    var failure: String? { lock.withLock { firstFailure } }

    /// Writes the waiting lines and then `line`, in one `write(2)` when they all go through;
    /// returns `line`'s error, if it could not be written.
    private func flush(then line: [UInt8]?) -> Int32? {
        fileLock.withLock { () -> Int32? in
            lock.withLock { swap(&writing, &waiting) }
            let before = writing.count
            if let line { writing.append(contentsOf: line) }
            defer { writing.removeAll(keepingCapacity: true) }
            guard !writing.isEmpty else { return nil }
            guard append(writing[...]) != nil else { return nil }
            // Not all of it fits: each line on its own, so that those that fit are kept.
            var start = 0
            var lineFailure: Int32?
            for end in writing.indices where writing[end] == 0x0A {
                if let failed = append(writing[start...end]) {
                    record(failed)
                    if start >= before { lineFailure = failed }
                }
                start = end + 1
            }
            return lineFailure
        }
    }

    /// Appends whole lines with one `write(2)`, or, when that fails, takes back what part of
    /// them went out. Under `fileLock`.
    private func append(_ bytes: ArraySlice<UInt8>) -> Int32? {
        let failure = bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
        guard ownsDescriptor else { return failure }
        if failure == nil {
            size += off_t(bytes.count)
        } else {
            _ = ftruncate(descriptor, size)
        }
        return failure
    }

    private func record(_ failure: Int32) {
        let reason = LogWriterError(path: url.path, reason: String(cString: strerror(failure)))
        lock.withLock { if firstFailure == nil { firstFailure = "\(reason)" } }
    }

    /// Whether the file was deleted or replaced since it was opened (its folder removed, say):
    /// lines written now would reach no one. Standard output is never gone.
    var isGone: Bool {
        guard ownsDescriptor else { return false }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0 else { return true }
        guard opened.st_nlink > 0, stat(url.path, &named) == 0 else { return true }
        return opened.st_dev != named.st_dev || opened.st_ino != named.st_ino
    }

    /// Writes every waiting line and flushes the file to disk.
    func sync() {
        flush()
        fsync(descriptor)
    }
}

/// The log file could not be written.
struct LogWriterError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "cannot write the log \(path): \(reason)" }
}
