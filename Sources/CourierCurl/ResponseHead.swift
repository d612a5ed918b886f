import Courier

/// The status and header fields of a response, taken from the raw header lines libcurl hands
/// over one at a time (status lines included): a value of its own so that the parsing can be
/// tested and fuzzed without a transfer.
struct ResponseHead {
    var status = 0
    var headers = HTTPHeaders()
    /// The final response's Content-Length (0 when absent or not a number).
    var expectedLength = 0
    /// Whether the blank line that ends the final response's header block has come. libcurl
    /// returns a response cut after its status line as a whole one with an empty body.
    var isComplete = false
    /// Why a Content-Length value of this response cannot frame its body, when one cannot
    /// (``ResponseFraming/contentLengthProblem(_:)``).
    var contentLengthProblem: String?
    /// Every Content-Length value so far, as one list.
    private var lengths = ""

    /// Takes one raw header line. A status line starts a new response, so that only the final
    /// response's fields are kept (after `100 Continue`, for instance).
    ///
    /// Works on bytes: this runs for every header of every response, and Foundation's string
    /// trimming cost more than the rest of the transfer put together.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        let line = Self.trimmed(bytes)
        guard !line.isEmpty else {
            // The blank line: the end of this response's header block.
            if status != 0 { isComplete = true }
            return
        }
        if line.starts(with: Self.httpPrefix) {
            isComplete = false
            contentLengthProblem = nil
            lengths = ""
            headers = HTTPHeaders()
            // Most responses have fewer fields than this: one allocation for all of them.
            headers.reserveCapacity(16)
            expectedLength = 0
            status = Self.statusCode(in: line)
        } else if line[line.startIndex] == 0x20 || line[line.startIndex] == 0x09 {
            // An obsolete folded continuation line belongs to the previous field.
            headers.appendToLastValue(" " + Self.text(line))
        } else if let colon = line.firstIndex(of: 0x3A) {
            let nameBytes = line[line.startIndex..<colon]
            let valueBytes = Self.trimmed(line[(colon + 1)...])
            let value = Self.text(valueBytes)
            headers.add(Self.text(nameBytes), value)
            if Self.isContentLength(nameBytes) {
                if lengths.isEmpty, let length = Self.plainLength(valueBytes) {
                    // Nearly every response: one field of a few digits, read on the bytes.
                    // The general check goes through a generic string, unspecialised across
                    // modules: it took 4 % of a small request's CPU in `courier bench`.
                    expectedLength = length
                    lengths = value
                } else {
                    expectedLength = Int(value) ?? 0
                    // Several fields are one list (RFC 9110 §5.3), checked as URLSession sees
                    // it: equal values are one length, differing ones frame nothing.
                    lengths = lengths.isEmpty ? value : lengths + ", " + value
                    contentLengthProblem = ResponseFraming.contentLengthProblem(lengths)
                }
            }
        }
    }

    private static let httpPrefix: [UInt8] = Array("HTTP/".utf8)
    private static let contentLength: [UInt8] = Array("content-length".utf8)

    /// Whether a field name is Content-Length, in any case, compared on the bytes.
    private static func isContentLength(_ name: Slice<UnsafeRawBufferPointer>) -> Bool {
        name.count == contentLength.count
            && zip(name, contentLength).allSatisfy { byte, lower in
                byte == lower || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == lower)
            }
    }

    /// The value of 1 to 18 ASCII digits, which always fits in an `Int`; `nil` for any other
    /// bytes (the general check then says what is wrong with them).
    private static func plainLength(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var length = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            length = length * 10 + Int(byte - 0x30)
        }
        return length
    }

    /// The slice without leading and trailing spaces, tabs, CR and LF.
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<
        UnsafeRawBufferPointer
    > {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> Slice<UnsafeRawBufferPointer> {
        // Only the end: a leading blank marks a folded line.
        var end = bytes.endIndex
        while end > 0, isBlank(bytes[end - 1]) { end -= 1 }
        return bytes[0..<end]
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    /// The three digits after "HTTP/x.y " (or "HTTP/2 "). Only three are read: a longer run
    /// of digits (a hostile server's) overflowed `Int` and trapped; the fuzzer found it.
    private static func statusCode(in line: Slice<UnsafeRawBufferPointer>) -> Int {
        guard let space = line.firstIndex(of: 0x20) else { return 0 }
        var code = 0
        var index = space + 1
        while index < line.endIndex, index < space + 4, (0x30...0x39).contains(line[index]) {
            code = code * 10 + Int(line[index] - 0x30)
            index += 1
        }
        return code
    }
}
