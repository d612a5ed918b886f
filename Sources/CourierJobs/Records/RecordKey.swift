import Courier
import Foundation

/// A record's primary key (`records.key`) as canonical bytes, and the order of a merged file.
///
/// The canonical form is the key's compact JSON text, so `42` and `"42"` are different keys:
/// strings as ``JSONWriter`` escapes them, `true`/`false`, objects and arrays as compact JSON
/// with members in their order, and numbers as written except that a whole number written with
/// a fraction or an exponent (`1.0`, `1e2`) is written as the integer (`1`, `100`) when it is
/// exact in a `Double`, and `-0` is `0`. Two texts are one key exactly when their bytes are
/// equal.
///
/// Keys are ordered with integers first, by numeric value (so `9` comes before `10`), then
/// every other key by its bytes. That is a total order, and the order of the lines of a merged
/// file.
enum RecordKey {
    /// The canonical key of `node`, or `nil` for `null` (a record without a key).
    static func canonical(_ node: JSONNode) -> [UInt8]? {
        switch node.value {
        case .null: return nil
        case .number: return canonicalNumber(Array((node.numberSource ?? "0").utf8))
        default:
            var output: [UInt8] = []
            JSONWriter.write(node, to: &output)
            return output
        }
    }

    /// A JSON number's text in the canonical form.
    static func canonicalNumber(_ text: [UInt8]) -> [UInt8] {
        if isInteger(text[...]) {
            return text == Array("-0".utf8) ? [UInt8(ascii: "0")] : text
        }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite,
            value == value.rounded(), abs(value) < 9_007_199_254_740_992
        else { return text }
        return Array(String(Int(value)).utf8)
    }

    /// Whether `bytes` are a JSON integer: an optional `-` and digits.
    static func isInteger(_ bytes: ArraySlice<UInt8>) -> Bool {
        var digits = bytes
        if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// The order of keys: integers by value before every other key, which compare by bytes.
    /// Negative when `a` comes first, 0 when they are the same key.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let aInteger = isInteger(a)
        let bInteger = isInteger(b)
        if aInteger != bInteger { return aInteger ? -1 : 1 }
        if aInteger {
            let aNegative = a[0] == UInt8(ascii: "-")
            let bNegative = b[0] == UInt8(ascii: "-")
            if aNegative != bNegative { return aNegative ? -1 : 1 }
            // Canonical integers have no leading zeros: more digits is a larger magnitude.
            var order = a.count != b.count ? (a.count < b.count ? -1 : 1) : bytes(a, b)
            if aNegative { order = -order }
            return order
        }
        return bytes(a, b)
    }

    private static func isInteger(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return false }
        var index = bytes[0] == UInt8(ascii: "-") ? 1 : 0
        guard index < bytes.count else { return false }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= 0x30 && byte <= 0x39 else { return false }
            index += 1
        }
        return true
    }

    /// Byte order, a shorter prefix first.
    private static func bytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let aBase = a.baseAddress, let bBase = b.baseAddress {
            let order = memcmp(aBase, bBase, common)
            if order != 0 { return Int(order) }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// ``compare(_:_:)`` of two byte arrays.
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in compare(a, b) } }
    }
}
