import Courier
import Foundation

/// Reads one log line's JSON in a single pass without building a tree: values of the fields the
/// consumers use are decoded, every other value is only stepped over. Profiling `courier report`
/// showed the general parser (a node per value, a `String` per scalar, a hash set per object to
/// refuse duplicate keys) spending most of its time on what the log consumers never read.
///
/// It accepts exactly JSON, so a malformed line is still refused as a whole.
struct LogLineScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.index = 0
    }

    /// The line, or `nil` when it is not JSON or not a log line.
    static func parse(_ line: ArraySlice<UInt8>, responseHeaders: Bool = false) -> LogLine? {
        line.withUnsafeBufferPointer { buffer in
            var scanner = LogLineScanner(buffer)
            var fields = LogLine.Fields()
            fields.keepResponseHeaders = responseHeaders
            guard scanner.object({ scanner, key in scanner.field(key, into: &fields) }) else {
                return nil
            }
            scanner.skipWhitespace()
            guard scanner.index == buffer.count else { return nil }
            return LogLine(fields)
        }
    }

    /// `true`, or anything else (left as it was) stepped over.
    mutating func bool(into target: inout Bool) -> Bool {
        skipWhitespace()
        if word("true") {
            target = true
            return true
        }
        return skipValue()
    }

    /// An object key: its bytes as written, or its decoded text when it has escapes (rare).
    enum Key {
        case bytes(Slice<UnsafeBufferPointer<UInt8>>)
        case decoded(String)

        /// Whether the key is `name`.
        func `is`(_ name: StaticString) -> Bool {
            switch self {
            case .bytes(let raw):
                let count = name.utf8CodeUnitCount
                guard raw.count == count else { return false }
                var offset = 0
                for byte in raw {
                    guard byte == name.utf8Start[offset] else { return false }
                    offset += 1
                }
                return true
            case .decoded(let text): return text == name.description
            }
        }

        var text: String {
            switch self {
            case .bytes(let raw):
                String(decoding: UnsafeBufferPointer(rebasing: raw), as: UTF8.self)
            case .decoded(let text): text
            }
        }
    }

    /// The key at `index` (a JSON string); `nil` when it is not a valid one.
    mutating func key() -> Key? {
        let start = index
        guard let (contents, escaped) = scanString() else { return nil }
        guard escaped else { return .bytes(contents) }
        // Rare: read again by the decoding path.
        index = start
        return string().map(Key.decoded)
    }

    /// Steps over the string at `index` (which must start with a quote), returning its
    /// contents as written and whether they have escapes; `nil` when it is unterminated or
    /// holds a control character. The one scan behind ``key()``, ``string()`` and
    /// ``skipString()``.
    mutating func scanString() -> (Slice<UnsafeBufferPointer<UInt8>>, escaped: Bool)? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        var escaped = false
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                index = end + 1
                return (bytes[start..<end], escaped)
            }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                end += 2
            } else {
                end += 1
            }
        }
        return nil
    }

    /// A string value, or `null` (left as `nil`); anything else is stepped over.
    mutating func string(into target: inout String?) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "\"") {
            guard let text = string() else { return false }
            target = text
            return true
        }
        return skipValue()
    }

    /// A number value, or `null`; anything else is stepped over.
    mutating func number(into target: inout Double?) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { return false }
        let byte = bytes[index]
        if byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39) {
            guard let value = number() else { return false }
            target = value
            return true
        }
        return skipValue()
    }

    mutating func number(into target: inout Int?) -> Bool {
        var value: Double?
        guard number(into: &value) else { return false }
        if let value, value.magnitude < 1e15 { target = Int(value) }
        return true
    }

    // MARK: - JSON

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Walks an object, calling `member` with each key positioned at its value.
    mutating func object(_ member: (inout LogLineScanner, Key) -> Bool) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return skipValue() }
        index += 1
        return elements(closedBy: UInt8(ascii: "}")) { scanner in
            guard let key = scanner.key() else { return false }
            scanner.skipWhitespace()
            guard scanner.index < scanner.bytes.count,
                scanner.bytes[scanner.index] == UInt8(ascii: ":")
            else { return false }
            scanner.index += 1
            return member(&scanner, key)
        }
    }

    mutating func array(_ element: (inout LogLineScanner) -> Bool) -> Bool {
        index += 1  // the caller saw "["
        return elements(closedBy: UInt8(ascii: "]"), element)
    }

    /// The elements of an object or array, its opening bracket read: each read by `element`,
    /// separated by commas, up to `closing`.
    private mutating func elements(
        closedBy closing: UInt8, _ element: (inout LogLineScanner) -> Bool
    ) -> Bool {
        skipWhitespace()
        if index < bytes.count, bytes[index] == closing {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard element(&self) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == closing else { return false }
            index += 1
            return true
        }
    }

    /// Steps over any value, checking it is well formed.
    mutating func skipValue() -> Bool {
        skipWhitespace()
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""): return skipString()
        case UInt8(ascii: "{"): return object { scanner, _ in scanner.skipValue() }
        case UInt8(ascii: "["): return array { scanner in scanner.skipValue() }
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        default: return number() != nil
        }
    }

    mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] {
            return false
        }
        index += count
        return true
    }

    mutating func skipString() -> Bool {
        guard let (contents, escaped) = scanString() else { return false }
        // Escapes are rare in logs, and checked on the bytes (a bad `\u` was accepted here
        // until `make fuzz` compared the scanner with the strict parser).
        return !escaped || Self.hasValidEscapes(contents)
    }

    /// Whether the escapes of a string's contents are what the strict parser accepts:
    /// `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`, and `\u` with four hex digits, a high
    /// surrogate only when a low one follows. Checked on the bytes: every log line has one such
    /// string (an ETag's quotes), and handing it to the strict parser was a sixth of
    /// `courier report`'s time.
    static func hasValidEscapes(_ contents: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let end = contents.endIndex
        var index = contents.startIndex
        func hex4(at start: Int) -> UInt32? {
            guard start + 4 <= end else { return nil }
            return HexNumber.value(of: contents[start..<start + 4])
        }
        while index < end {
            guard contents[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            guard index + 1 < end else { return false }
            switch contents[index + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 2
            case UInt8(ascii: "u"):
                guard let first = hex4(at: index + 2) else { return false }
                index += 6
                if (0xD800..<0xDC00).contains(first) {
                    guard index + 1 < end, contents[index] == UInt8(ascii: "\\"),
                        contents[index + 1] == UInt8(ascii: "u"),
                        let second = hex4(at: index + 2), (0xDC00..<0xE000).contains(second)
                    else { return false }
                    index += 6
                } else if (0xDC00..<0xE000).contains(first) {
                    return false
                }
            default:
                return false
            }
        }
        return true
    }

    /// A string at `index`, escapes decoded; `nil` when it is not a valid JSON string.
    mutating func string() -> String? {
        guard let (contents, escaped) = scanString() else { return nil }
        let raw = UnsafeBufferPointer(rebasing: contents)
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        // Rare in logs (quotes and backslashes in messages): the strict parser decodes them.
        var quoted = [UInt8(ascii: "\"")]
        quoted.append(contentsOf: raw)
        quoted.append(UInt8(ascii: "\""))
        guard case .string(let text)? = try? JSONParser.parse(quoted).value else { return nil }
        return text
    }

    /// A JSON number at `index`.
    mutating func number() -> Double? {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        var integer: UInt64 = 0
        var digits = 0
        var simple = true
        // The digits from `index` on, into `integer` while it holds them exactly; how many.
        func digitRun() -> Int {
            let first = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if digits < 18 {
                    integer = integer * 10 + UInt64(bytes[index] - 0x30)
                } else {
                    simple = false
                }
                digits += 1
                index += 1
            }
            return index - first
        }
        guard digitRun() > 0 else { return nil }
        if digits > 1, bytes[start + (bytes[start] == UInt8(ascii: "-") ? 1 : 0)] == 0x30 {
            return nil
        }
        var fraction = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            fraction = digitRun()
            guard fraction > 0 else { return nil }
        }
        if index < bytes.count,
            bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")
        {
            simple = false
            index += 1
            if index < bytes.count,
                bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
            {
                index += 1
            }
            let exponentStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > exponentStart else { return nil }
        }
        let negative = bytes[start] == UInt8(ascii: "-")
        if simple, fraction <= 15, integer < 1 << 53 {
            // Exact for up to 15 fraction digits: an integer below 2^53 over a power of ten.
            let value = Double(integer) / Self.powersOfTen[fraction]
            return negative ? -value : value
        }
        return Double(
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }
}
