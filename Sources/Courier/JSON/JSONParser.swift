/// A strict RFC 8259 parser that records each value's line and column.
///
/// Duplicate keys are an error (a job file must not say two things at once).
public struct JSONParser {
    /// Where and why parsing stopped.
    public struct Failure: Error, Sendable, Equatable {
        public var message: String
        public var line: Int
        public var column: Int
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses one JSON document.
    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONNode {
        var parser = JSONParser(bytes)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }  // UTF-8 BOM
        parser.skipWhitespace()
        let node = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw parser.failure("unexpected text after the JSON value")
        }
        return node
    }

    /// Parses one JSON document from text.
    public static func parse(_ text: String) throws(Failure) -> JSONNode {
        try parse(Array(text.utf8))
    }

    private var column: Int { index - lineStart + 1 }

    private func failure(_ message: String) -> Failure {
        Failure(message: message, line: line, column: column)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private mutating func parseValue() throws(Failure) -> JSONNode {
        guard index < bytes.count else { throw failure("unexpected end of file, expected a value") }
        let (startLine, startColumn) = (line, column)
        let value: JSONValue
        var numberText: String?
        switch bytes[index] {
        case UInt8(ascii: "{"): value = try parseObject()
        case UInt8(ascii: "["): value = try parseArray()
        case UInt8(ascii: "\""): value = .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); value = .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); value = .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); value = .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let (number, text) = try parseNumber()
            value = .number(number)
            numberText = text
        default:
            throw failure(
                "unexpected character '\(Character(Unicode.Scalar(bytes[index])))', expected a value"
            )
        }
        return JSONNode(value, line: startLine, column: startColumn, numberText: numberText)
    }

    private mutating func expectWord(_ word: String) throws(Failure) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count,
            Array(bytes[index..<index + expected.count]) == expected
        else { throw failure("invalid literal, expected '\(word)'") }
        index += expected.count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > 512 { throw failure("nesting deeper than 512 levels") }
    }

    private mutating func parseObject() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, node: JSONNode)] = []
        var seen = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a quoted key")
            }
            let (keyLine, keyColumn) = (line, column)
            let key = try parseString()
            guard seen.insert(key).inserted else {
                throw Failure(message: "duplicate key \"\(key)\"", line: keyLine, column: keyColumn)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            var node = try parseValue()
            // Errors about a member point at its key, where a reader looks first.
            if case .object = node.value {
            } else if case .array = node.value {
            } else {
                node.line = keyLine
                node.column = keyColumn
            }
            members.append((key, node))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of file in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of file in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw failure("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ parser: JSONParser, to end: Int) {
            scalars.append(
                contentsOf: String(decoding: parser.bytes[run..<end], as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush(self, to: index)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("control character in a string (escape it)") }
            if byte == UInt8(ascii: "\\") {
                flush(self, to: index)
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try parseUnicodeEscape())
                default: throw failure("invalid escape in a string")
                }
                run = index
                continue
            }
            index += 1
        }
        throw failure("unterminated string")
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else {
                throw failure("invalid \\u escape")
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800..<0xDC00).contains(first) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            else { throw failure("unpaired surrogate in \\u escape") }
            index += 2
            let second = try parseHex4()
            guard (0xDC00..<0xE000).contains(second) else {
                throw failure("invalid surrogate pair")
            }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            return Unicode.Scalar(combined)!
        }
        guard let scalar = Unicode.Scalar(first) else {
            throw failure("unpaired surrogate in \\u escape")
        }
        return scalar
    }

    /// The number's value and its exact source text.
    private mutating func parseNumber() throws(Failure) -> (Double, String) {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
            {
                parser.index += 1
            }
            return parser.index - from
        }
        let integerStart = index
        guard digits(&self) > 0 else { throw failure("invalid number") }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 {
            throw failure("numbers may not have leading zeros")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else {
                throw failure("invalid number: digits expected after '.'")
            }
        }
        if index < bytes.count,
            bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")
        {
            index += 1
            if index < bytes.count,
                bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
            {
                index += 1
            }
            guard digits(&self) > 0 else {
                throw failure("invalid number: digits expected in exponent")
            }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else { throw failure("invalid number") }
        return (value, text)
    }
}
