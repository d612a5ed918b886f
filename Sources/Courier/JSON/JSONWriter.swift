/// Writes JSON text with keys in the order given, on one line: the log format's writer.
///
/// It writes UTF-8 bytes into one growing buffer: the log writes a line per request, and the
/// first version (a `String` appended one Unicode scalar at a time) was the largest cost of a
/// run in a profile.
package enum JSONWriter {
    /// A value to write; objects are ordered pairs.
    ///
    /// Not `indirect`: arrays already hold their elements out of line, and an indirect enum
    /// boxes every value, even an `.int`, in its own allocation.
    package enum Value: Sendable {
        case null
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case array([Value])
        case object([(String, Value)])
        /// JSON text written as it is: a number's source text, which must be valid JSON.
        case raw(String)
    }

    /// The compact JSON text of `value`.
    package static func string(_ value: Value) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// The compact JSON text of `value` as UTF-8 bytes.
    package static func bytes(_ value: Value) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        write(value, to: &output)
        return output
    }

    /// Appends `[`, each element written by `write` with commas between, and `]`: the one
    /// array form for ``Value`` and ``JSONNode`` alike.
    package static func writeArray<Elements: Sequence>(
        _ elements: Elements, to output: inout [UInt8],
        _ write: (Elements.Element, inout [UInt8]) -> Void
    ) {
        writeSeparated(elements, opening: "[", closing: "]", to: &output, write)
    }

    /// Appends `{`, each member as its escaped `key` and its value written by `value`, with
    /// commas between, and `}`.
    package static func writeObject<Members: Sequence>(
        _ members: Members, to output: inout [UInt8], key: (Members.Element) -> String,
        _ value: (Members.Element, inout [UInt8]) -> Void
    ) {
        writeSeparated(members, opening: "{", closing: "}", to: &output) { member, output in
            writeString(key(member), to: &output)
            output.append(UInt8(ascii: ":"))
            value(member, &output)
        }
    }

    /// `opening`, each element written by `write` with commas between, and `closing`.
    private static func writeSeparated<Elements: Sequence>(
        _ elements: Elements, opening: Unicode.Scalar, closing: Unicode.Scalar,
        to output: inout [UInt8], _ write: (Elements.Element, inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: opening))
        var first = true
        for element in elements {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            write(element, &output)
        }
        output.append(UInt8(ascii: closing))
    }

    /// Appends the JSON text of `value` to `output`.
    package static func write(_ value: Value, to output: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &output)
        case .bool(let flag): append(flag ? "true" : "false", to: &output)
        case .int(let number): writeInteger(number, to: &output)
        case .double(let number): writeDouble(number, to: &output)
        case .string(let text): writeString(text, to: &output)
        case .raw(let text): output.append(contentsOf: text.utf8)
        case .array(let elements):
            writeArray(elements, to: &output) { write($0, to: &$1) }
        case .object(let members):
            writeObject(members, to: &output, key: \.0) { write($0.1, to: &$1) }
        }
    }

    /// A number with at most three decimals (durations are milliseconds, and microseconds are
    /// noise), without trailing zeros; `null` when it is not finite.
    package static func writeDouble(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            append("null", to: &output)
            return
        }
        let rounded = (number * 1000).rounded() / 1000
        guard abs(rounded) < 1e15 else {
            output.append(contentsOf: String(rounded).utf8)
            return
        }
        if rounded == rounded.rounded() {
            writeInteger(Int(rounded), to: &output)
            return
        }
        // Whole part, then up to three decimals without trailing zeros.
        let thousandths = Int((abs(rounded) * 1000).rounded())
        if rounded < 0 { output.append(UInt8(ascii: "-")) }
        writeInteger(thousandths / 1000, to: &output)
        var fraction = thousandths % 1000
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        output.append(UInt8(ascii: "."))
        // The decimals written from the last, zero-padded to their place (5 µs and 50 µs are
        // ".005" and ".05" ms), without a String per number.
        let start = output.count
        for _ in 0..<digits { output.append(UInt8(ascii: "0")) }
        var index = start + digits - 1
        while index >= start {
            output[index] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
            index -= 1
        }
    }

    /// Appends literal text (a keyword, a key) as it is.
    package static func append(_ text: StaticString, to output: inout [UInt8]) {
        output.append(
            contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package static func writeInteger(_ number: Int, to output: inout [UInt8]) {
        if number < 0 {
            guard number != .min else {
                output.append(contentsOf: String(number).utf8)
                return
            }
            output.append(UInt8(ascii: "-"))
            writeInteger(-number, to: &output)
            return
        }
        if number < 10 {
            output.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = number
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) {
                output.append(buffer[index])
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string.
    package static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            // Most strings (names, URLs, header values) need no escape: copied in one go.
            guard
                bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 })
            else {
                output.append(contentsOf: bytes)
                return
            }
            var runStart = 0
            var index = 0
            func flush() {
                if runStart < index {
                    output.append(
                        contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
            }
            while index < bytes.count {
                let byte = bytes[index]
                var escape: [UInt8]?
                switch byte {
                case UInt8(ascii: "\""): escape = [0x5C, 0x22]
                case UInt8(ascii: "\\"): escape = [0x5C, 0x5C]
                case 0x0A: escape = [0x5C, UInt8(ascii: "n")]
                case 0x0D: escape = [0x5C, UInt8(ascii: "r")]
                case 0x09: escape = [0x5C, UInt8(ascii: "t")]
                case 0..<0x20:
                    escape =
                        Array("\\u00".utf8) + [
                            hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)],
                        ]
                case 0xE2
                where index + 2 < bytes.count && bytes[index + 1] == 0x80
                    && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                    // U+2028 and U+2029 are valid JSON but end lines in JavaScript.
                    flush()
                    output.append(
                        contentsOf: Array((bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8))
                    index += 3
                    runStart = index
                    continue
                default:
                    break
                }
                if let escape {
                    flush()
                    output.append(contentsOf: escape)
                    index += 1
                    runStart = index
                } else {
                    index += 1
                }
            }
            flush()
        }
        output.append(UInt8(ascii: "\""))
    }
}
