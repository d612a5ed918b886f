import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values of one capture, in the order they came: the first `memoryLimit` in memory, the
/// rest in an unlinked temporary file, so that a parent listing a million ids costs a bounded
/// amount of memory however far its children fall behind.
struct CaptureValues {
    /// Where one reader has got to.
    struct Cursor {
        var index = 0
        var fileOffset: Int64 = 0
    }

    private let memoryLimit: Int
    private var memory: [String] = []
    private var spill: Int32 = -1
    private var spillEnd: Int64 = 0
    private(set) var count = 0
    /// Whether any two values differ (a `{name}` use needs one value).
    private(set) var hasDifferentValues = false

    init(memoryLimit: Int) { self.memoryLimit = max(1, memoryLimit) }

    /// The first value, if any.
    var first: String? { memory.first }

    mutating func append(_ value: String) throws {
        if count > 0, !hasDifferentValues, value != memory[0] { hasDifferentValues = true }
        count += 1
        if memory.count < memoryLimit {
            memory.append(value)
            return
        }
        if spill < 0 { spill = try Self.temporaryFile() }
        // Length-prefixed, so that any byte (a newline too) may be in a value.
        var length = UInt32(value.utf8.count).littleEndian
        var record = withUnsafeBytes(of: &length) { Array($0) }
        record += value.utf8
        try record.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let result = pwrite(
                    spill, buffer.baseAddress! + written, buffer.count - written,
                    off_t(spillEnd) + off_t(written))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw CaptureSpillError(message: String(cString: strerror(errno)))
                }
                written += result
            }
        }
        spillEnd += Int64(record.count)
    }

    /// The value at the cursor, moving it on; `nil` when the reader has every value so far.
    func next(_ cursor: inout Cursor) -> String? {
        guard cursor.index < count else { return nil }
        defer { cursor.index += 1 }
        if cursor.index < memory.count { return memory[cursor.index] }
        var length: UInt32 = 0
        guard read(into: &length, at: cursor.fileOffset) else { return nil }
        let size = Int(UInt32(littleEndian: length))
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { buffer in
            size == 0 ? 0 : pread(spill, buffer.baseAddress!, size, off_t(cursor.fileOffset + 4))
        }
        guard got == size else { return nil }
        cursor.fileOffset += 4 + Int64(size)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func read(into length: inout UInt32, at offset: Int64) -> Bool {
        withUnsafeMutableBytes(of: &length) { buffer in
            pread(spill, buffer.baseAddress!, 4, off_t(offset)) == 4
        }
    }

    /// Closes the spill file (already unlinked: nothing is left on disk).
    func release() {
        if spill >= 0 { _ = close(spill) }
    }

    private static func temporaryFile() throws -> Int32 {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(folder)/courier-capture-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw CaptureSpillError(
                message:
                    "cannot make a temporary file in \(folder): \(String(cString: strerror(errno)))"
            )
        }
        // Unlinked at once: the file goes away with the process, even after kill -9.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return descriptor
    }
}

/// Captured values could not be kept.
struct CaptureSpillError: Error, CustomStringConvertible {
    let message: String
    var description: String { "cannot keep captured values: \(message)" }
}
