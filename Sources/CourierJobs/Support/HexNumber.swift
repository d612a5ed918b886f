/// Reads hexadecimal digits (`0-9`, `a-f`, `A-F`) as a number: JSON's `\uXXXX` escapes, which
/// both the log scanner and the redactor read on bytes.
enum HexNumber {
    /// The value of `digits`, or `nil` when one of them is not a hex digit.
    static func value(of digits: some Collection<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value * 16 + UInt32(digit)
        }
        return value
    }
}
