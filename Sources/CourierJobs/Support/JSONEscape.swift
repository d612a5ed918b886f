/// Reads one JSON string escape (`\n`, `\"`, `\u00e9`, a surrogate pair `\ud83d\ude00`): the
/// one reader for the redactor, which finds secrets inside escaped log text, and the curl
/// formatter, which finds them inside JSON bodies.
enum JSONEscape {
    /// The UTF-8 bytes the escape starting at `index` (a `\`) stands for, and its length in
    /// `bytes`; `nil` when there is no valid escape there.
    static func decode(_ bytes: [UInt8], at index: Int) -> ([UInt8], Int)? {
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\") else { return nil }
        func hex(_ start: Int) -> UInt32? {
            guard start + 4 <= bytes.count else { return nil }
            return HexNumber.value(of: bytes[start..<start + 4])
        }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            return ([bytes[index + 1]], 2)
        case UInt8(ascii: "n"): return ([0x0A], 2)
        case UInt8(ascii: "r"): return ([0x0D], 2)
        case UInt8(ascii: "t"): return ([0x09], 2)
        case UInt8(ascii: "b"): return ([0x08], 2)
        case UInt8(ascii: "f"): return ([0x0C], 2)
        case UInt8(ascii: "u"):
            guard let unit = hex(index + 2) else { return nil }
            if (0xD800..<0xDC00).contains(unit), index + 11 < bytes.count,
                bytes[index + 6] == UInt8(ascii: "\\"), bytes[index + 7] == UInt8(ascii: "u"),
                let low = hex(index + 8), (0xDC00..<0xE000).contains(low)
            {
                let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(scalar).map { (Array(String($0).utf8), 12) }
            }
            return Unicode.Scalar(unit).map { (Array(String($0).utf8), 6) }
        default: return nil
        }
    }
}
