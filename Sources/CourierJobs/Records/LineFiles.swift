import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file's lines through one buffer: the records files, parts and sorted runs of a merge,
/// which may each be far larger than memory. Not thread-safe: one reader, one thread.
final class LineInput {
    private let descriptor: Int32
    private let path: String
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Lines returned so far (a line number for messages).
    private(set) var lineNumber = 0

    /// Reads from `descriptor` (which the caller closes) from its current offset.
    init(descriptor: Int32, path: String, bufferSize: Int = 256 << 10) {
        self.descriptor = descriptor
        self.path = path
        buffer = .allocate(byteCount: max(16, bufferSize), alignment: 1)
    }

    deinit { buffer.deallocate() }

    /// The next line without its line break, valid until the next call; `nil` at the end. A
    /// last line without a line break is a line.
    func next() throws(FileError) -> UnsafeRawBufferPointer? {
        while true {
            if start < end,
                let found = memchr(buffer.baseAddress! + start, 0x0A, end - start)
            {
                let lineEnd = buffer.baseAddress!.distance(to: found)
                let line = UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd])
                start = lineEnd + 1
                lineNumber += 1
                return line
            }
            if atEnd {
                guard start < end else { return nil }
                let line = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
                start = end
                lineNumber += 1
                return line
            }
            try fill()
        }
    }

    /// Moves the unread bytes to the front (growing the buffer for a line longer than it) and
    /// reads more.
    private func fill() throws(FileError) {
        if start > 0 {
            if end > start {
                memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start)
            }
            end -= start
            start = 0
        }
        if end == buffer.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(
                byteCount: buffer.count * 2, alignment: 1)
            larger.copyMemory(from: UnsafeRawBufferPointer(buffer))
            buffer.deallocate()
            buffer = larger
        }
        while true {
            let count = POSIX.read(
                descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, action: "read", code: errno)
            }
            if count == 0 { atEnd = true }
            end += count
            return
        }
    }
}

/// Writes bytes to a file through one buffer. Not thread-safe.
final class LineOutput {
    private let descriptor: Int32
    let path: String
    private var buffer: [UInt8] = []
    private let flushSize: Int
    /// Bytes written so far, buffered ones included.
    private(set) var count = 0

    init(descriptor: Int32, path: String, flushSize: Int = 1 << 20) {
        self.descriptor = descriptor
        self.path = path
        self.flushSize = flushSize
        buffer.reserveCapacity(flushSize)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        buffer.append(contentsOf: bytes)
        count += bytes.count
        if buffer.count >= flushSize { try flush() }
    }

    func write(_ bytes: [UInt8]) throws(FileError) {
        buffer.append(contentsOf: bytes)
        count += bytes.count
        if buffer.count >= flushSize { try flush() }
    }

    /// A line: `bytes` and a line break.
    func writeLine(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        try write(bytes)
        buffer.append(0x0A)
        count += 1
    }

    func flush() throws(FileError) {
        guard !buffer.isEmpty else { return }
        if let code = buffer.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: path, action: "write", code: code)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// A file for a merge's sorted runs: made in a folder of the output's file system (a run can be
/// as large as the records) and unlinked at once, so that nothing is left however the process
/// ends.
enum ScratchFile {
    static func make(in folder: URL) throws(FileError) -> Int32 {
        var attempt = 0
        while true {
            let path = folder.appendingPathComponent(
                ".sort.\(UUID().uuidString.prefix(8)).scratch"
            ).path
            let descriptor = open(
                path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor >= 0 {
                unlink(path)
                return descriptor
            }
            attempt += 1
            if errno != EEXIST || attempt > 8 {
                throw FileError(path: path, action: "create", code: errno)
            }
        }
    }
}
