/// Writes JSON text with keys in the order given, on one line: the log format's writer.
public enum JSONWriter {
    /// A value to write; objects are ordered pairs.
    public indirect enum Value: Sendable {
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
    public static func string(_ value: Value) -> String {
        var output = ""
        output.reserveCapacity(256)
        write(value, to: &output)
        return output
    }

    private static func write(_ value: Value, to output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let number): output += String(number)
        case .double(let number):
            if number.isFinite {
                // Three decimals: durations are milliseconds, and microseconds are noise.
                let rounded = (number * 1000).rounded() / 1000
                output +=
                    rounded == rounded.rounded() && abs(rounded) < 1e15
                    ? String(Int(rounded)) : String(rounded)
            } else {
                output += "null"
            }
        case .string(let text): writeString(text, to: &output)
        case .raw(let text): output += text
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                write(element, to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                writeString(member.0, to: &output)
                output += ":"
                write(member.1, to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{2028}": output += "\\u2028"
            case "\u{2029}": output += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
