import Courier

/// The status and header fields of a response, taken from the raw header lines libcurl hands
/// over one at a time (status lines included): a value of its own so that the parsing can be
/// tested and fuzzed without a transfer.
struct ResponseHead {
    var status = 0
    /// The final response's Content-Length (0 when absent or not a number).
    var expectedLength = 0
    /// The final response's header lines as they came, trimmed, each ended by a line feed.
    /// They become ``headers`` only when asked: on the event loop, curl hands over every line of
    /// every response, and making their strings there kept the busiest thread busier. The
    /// caller's thread asks, once the response is whole.
    private var lines: [UInt8] = []

    /// Takes one raw header line. A status line starts a new response, so that only the final
    /// response's fields are kept (after `100 Continue`, for instance).
    ///
    /// Works on bytes: this runs for every header of every response, and Foundation's string
    /// trimming cost more than the rest of the transfer put together.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        let line = Self.trimmed(bytes)
        guard !line.isEmpty else { return }
        if line.starts(with: Self.httpPrefix) {
            lines.removeAll(keepingCapacity: true)
            expectedLength = 0
            status = Self.statusCode(in: line)
            return
        }
        if let colon = line.firstIndex(of: 0x3A),
            Self.isContentLength(line[line.startIndex..<colon])
        {
            expectedLength = Int(Self.text(Self.trimmed(line[(colon + 1)...]))) ?? 0
        }
        if lines.isEmpty { lines.reserveCapacity(512) }
        lines.append(contentsOf: line)
        lines.append(0x0A)
    }

    /// The final response's fields, in order, repeated ones kept; an obsolete folded
    /// continuation line joins the field before it.
    var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(16)
        lines.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                let end = all[start...].firstIndex(of: 0x0A) ?? all.count
                let line = all[start..<end]
                start = end + 1
                if line[line.startIndex] == 0x20 || line[line.startIndex] == 0x09 {
                    guard !headers.isEmpty else { continue }
                    var fields = headers.fields
                    fields[fields.count - 1].value += " " + Self.text(Self.trimmed(line))
                    headers = HTTPHeaders(fields)
                } else if let colon = line.firstIndex(of: 0x3A) {
                    headers.add(
                        Self.text(line[line.startIndex..<colon]),
                        Self.text(Self.trimmed(line[(colon + 1)...])))
                }
            }
        }
        return headers
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
