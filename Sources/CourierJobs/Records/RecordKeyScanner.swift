import Courier
import Foundation

/// Finds the key of a line of a records file without parsing the whole line: a merge reads the
/// key of every line of the file it merges into (millions), and building each line's tree took
/// most of that time. The scanner walks the pointer's members and skips every other value; the
/// value at the end gives the same canonical bytes as ``RecordKey/canonical(_:)`` (strings with
/// escapes, objects and arrays are parsed, being rare as keys). The line is copied as it is, so
/// only the path to the key needs to be well-formed.
struct RecordKeyScanner {
    /// The pointer's tokens, unescaped (`~1` is `/`, `~0` is `~`).
    let tokens: [[UInt8]]

    init(pointer: String) {
        tokens =
            pointer.isEmpty
            ? []
            : pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
                Array(
                    $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(
                        of: "~0", with: "~"
                    ).utf8)
            }
    }

    /// The canonical key of `line`, or `nil` when the pointer leads nowhere, to `null`, or
    /// through bytes that are not JSON, or when the line is not one whole value: its strings,
    /// objects and arrays must close, with nothing after (a cut line, or two run together,
    /// would otherwise be kept as a record).
    func key(in line: UnsafeRawBufferPointer) -> [UInt8]? {
        var position = skipSpace(line, 0)
        guard let whole = valueEnd(line, position), skipSpace(line, whole) == line.count else {
            return nil
        }
        for token in tokens {
            guard let next = descend(line, at: position, into: token) else { return nil }
            position = next
        }
        guard let end = valueEnd(line, position) else { return nil }
        return canonical(UnsafeRawBufferPointer(rebasing: line[position..<end]))
    }

    /// The canonical key of one JSON value's bytes.
    private func canonical(_ value: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let first = value.first else { return nil }
        switch first {
        case UInt8(ascii: "n"): return nil
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return Array(value)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return RecordKey.canonicalNumber(Array(value))
        case UInt8(ascii: "\""):
            // Written as JSONWriter writes it when it has no escape and no U+2028/U+2029.
            let plain = !value.contains(UInt8(ascii: "\\")) && !value.contains(0xE2)
            if plain { return Array(value) }
            fallthrough
        default:
            guard let node = try? JSONParser.parse(Array(value)) else { return nil }
            return RecordKey.canonical(node)
        }
    }

    /// The position of the value of member `token` (an object) or element `token` (an array)
    /// of the value at `position`.
    private func descend(_ line: UnsafeRawBufferPointer, at position: Int, into token: [UInt8])
        -> Int?
    {
        guard position < line.count else { return nil }
        switch line[position] {
        case UInt8(ascii: "{"):
            var index = skipSpace(line, position + 1)
            if index < line.count, line[index] == UInt8(ascii: "}") { return nil }
            while index < line.count, line[index] == UInt8(ascii: "\"") {
                guard let keyEnd = valueEnd(line, index) else { return nil }
                let matches =
                    memberName(UnsafeRawBufferPointer(rebasing: line[index..<keyEnd]))
                    == token
                index = skipSpace(line, keyEnd)
                guard index < line.count, line[index] == UInt8(ascii: ":") else { return nil }
                index = skipSpace(line, index + 1)
                if matches { return index }
                guard let end = valueEnd(line, index) else { return nil }
                index = skipSpace(line, end)
                guard index < line.count, line[index] == UInt8(ascii: ",") else { return nil }
                index = skipSpace(line, index + 1)
            }
            return nil
        case UInt8(ascii: "["):
            guard let wanted = Int(String(decoding: token, as: UTF8.self)),
                String(wanted) == String(decoding: token, as: UTF8.self)
            else { return nil }
            var starts: [Int] = []
            var index = skipSpace(line, position + 1)
            if index < line.count, line[index] == UInt8(ascii: "]") { return nil }
            while index < line.count {
                starts.append(index)
                if wanted >= 0, starts.count == wanted + 1 { return index }
                guard let end = valueEnd(line, index) else { return nil }
                index = skipSpace(line, end)
                guard index < line.count else { return nil }
                if line[index] == UInt8(ascii: "]") { break }
                guard line[index] == UInt8(ascii: ",") else { return nil }
                index = skipSpace(line, index + 1)
            }
            let from = starts.count + wanted
            return wanted < 0 && from >= 0 ? starts[from] : nil
        default:
            return nil
        }
    }

    /// A member name's bytes, unescaped.
    private func memberName(_ quoted: UnsafeRawBufferPointer) -> [UInt8] {
        if !quoted.contains(UInt8(ascii: "\\")) { return Array(quoted.dropFirst().dropLast()) }
        guard let node = try? JSONParser.parse(Array(quoted)), case .string(let text) = node.value
        else { return [] }
        return Array(text.utf8)
    }

    private func skipSpace(_ line: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var index = start
        while index < line.count,
            line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D || line[index] == 0x0A
        {
            index += 1
        }
        return index
    }

    /// The position just after the value that starts at `start`.
    private func valueEnd(_ line: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        guard start < line.count else { return nil }
        var index = start
        switch line[start] {
        case UInt8(ascii: "\""):
            index += 1
            while index < line.count {
                switch line[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): return index + 1
                default: index += 1
                }
            }
            return nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < line.count {
                switch line[index] {
                case UInt8(ascii: "\""):
                    guard let end = valueEnd(line, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            while index < line.count {
                switch line[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0D,
                    0x0A:
                    return index > start ? index : nil
                default: index += 1
                }
            }
            return index > start ? index : nil
        }
    }
}
