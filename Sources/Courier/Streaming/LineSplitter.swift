/// Cuts bytes that arrive in any chunking into lines, ended by LF, CR or CRLF (the event
/// stream's rule, which also reads JSON lines written with either ending).
///
/// Lines are cut at the byte level and decoded whole, so a UTF-8 character or a CRLF split
/// across chunks comes out as it would from one chunk (CR and LF never occur inside a UTF-8
/// sequence). A UTF-8 byte order mark at the very start is dropped. A line longer than
/// `maxLineLength` bytes throws as soon as it passes the limit, before the rest of it arrives.
package struct LineSplitter: Sendable {
    package let maxLineLength: Int
    /// The bytes of the line not yet ended.
    private var pending: [UInt8] = []
    /// The last chunk ended with CR: an LF at the start of the next one belongs to it.
    private var afterCR = false
    private var atStart = true
    /// Lines ended so far, for error messages.
    package private(set) var lineCount = 0

    package init(maxLineLength: Int) {
        self.maxLineLength = maxLineLength
    }

    /// Adds a chunk and calls `line` with each line it ends, without its terminator, and the
    /// line's 1-based number.
    package mutating func feed(
        _ chunk: some Collection<UInt8>,
        line: (_ line: ArraySlice<UInt8>, _ number: Int) throws -> Void
    ) throws {
        var bytes = ArraySlice(chunk)
        if afterCR, let first = bytes.first {
            afterCR = false
            if first == UInt8(ascii: "\n") { bytes = bytes.dropFirst() }
        }
        while let end = bytes.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
            let head = bytes[bytes.startIndex..<end]
            if pending.isEmpty {
                // The whole line is in this chunk: no copy.
                try check(head.count)
                lineCount += 1
                try line(withoutMark(head), lineCount)
            } else {
                try append(head)
                lineCount += 1
                try line(withoutMark(pending[...]), lineCount)
                pending.removeAll(keepingCapacity: true)
            }
            let isCR = bytes[end] == 0x0D
            bytes = bytes[(end + 1)...]
            if isCR {
                if bytes.first == UInt8(ascii: "\n") {
                    bytes = bytes.dropFirst()
                } else if bytes.isEmpty {
                    afterCR = true
                }
            }
        }
        try append(bytes)
    }

    /// The unended last line, if the stream stopped in the middle of one.
    package mutating func finish() -> ArraySlice<UInt8>? {
        guard !pending.isEmpty else { return nil }
        lineCount += 1
        defer { pending = [] }
        return withoutMark(pending[...])
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) throws {
        try check(pending.count + bytes.count)
        pending.append(contentsOf: bytes)
    }

    private func check(_ length: Int) throws {
        guard length <= maxLineLength else {
            throw StreamError(
                .lineTooLong,
                "a line passed the limit of \(maxLineLength) bytes (maxLineLength)",
                line: lineCount + 1)
        }
    }

    /// The line without a byte order mark, when it is the stream's first.
    private mutating func withoutMark(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard atStart else { return line }
        atStart = false
        return line.starts(with: [0xEF, 0xBB, 0xBF]) ? line.dropFirst(3) : line
    }
}
