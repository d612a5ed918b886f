import Foundation

/// Streams the non-empty lines of a file (trimmed of surrounding spaces and CR), reading 64 KiB
/// at a time, so a file of any length is never held whole.
///
/// A line longer than ``maximumValueBytes`` is not held whole either: its first
/// `maximumValueBytes + 1` bytes stand for it (validation refuses any value that long) and the
/// rest is skipped as it is read.
struct LineReader: Sequence, IteratorProtocol {
    /// The longest value a `foreach` variable may take (docs/job-file.md, limits).
    static let maximumValueBytes = 65_536

    private let handle: FileHandle?
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts; the buffer is compacted only on refill.
    private var offset = 0
    private var finished = false
    /// Whether a chunk was read: a byte order mark can only start the first.
    private var readAny = false

    init(url: URL) {
        handle = try? FileHandle(forReadingFrom: url)
        finished = handle == nil
    }

    mutating func next() -> String? {
        while true {
            if let newline = buffer[offset...].firstIndex(of: 0x0A) {
                let line = buffer[offset..<newline]
                offset = newline + 1
                if let text = Self.value(line) { return text }
                continue
            }
            if finished {
                guard offset < buffer.count else { return nil }
                let rest = buffer[offset...]
                offset = buffer.count
                if let text = Self.value(rest) { return text }
                continue
            }
            if buffer.count - offset > Self.maximumValueBytes {
                return overlongLine()
            }
            buffer.removeFirst(offset)
            offset = 0
            if let chunk = try? handle?.read(upToCount: 64 << 10), !chunk.isEmpty {
                // A byte order mark is no part of the first value (trial III: it went out as
                // `%EF%BB%BF` in a query and into the task's id).
                let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
                let skip = !readAny && chunk.starts(with: bom) ? bom.count : 0
                readAny = true
                buffer.append(contentsOf: chunk.dropFirst(skip))
            } else {
                finished = true
                try? handle?.close()
            }
        }
    }

    /// The head of a line too long to be a value, the rest of it read and dropped.
    private mutating func overlongLine() -> String {
        let head = String(
            decoding: buffer[offset..<(offset + Self.maximumValueBytes + 1)], as: UTF8.self)
        buffer.removeAll(keepingCapacity: true)
        offset = 0
        while !finished {
            guard let chunk = try? handle?.read(upToCount: 64 << 10), !chunk.isEmpty else {
                finished = true
                try? handle?.close()
                break
            }
            if let newline = chunk.firstIndex(of: 0x0A) {
                buffer.append(contentsOf: chunk[(newline + 1)...])
                break
            }
        }
        return head
    }

    private static func value(_ bytes: ArraySlice<UInt8>) -> String? {
        var start = bytes.startIndex
        var end = bytes.endIndex
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        while start < end, blank(bytes[start]) { start += 1 }
        while end > start, blank(bytes[end - 1]) { end -= 1 }
        return start == end ? nil : String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
