import Courier
import Foundation

/// Why a response's records could not be taken (the task fails with `error.kind` `records`).
struct RecordsProblem: Error, Sendable {
    let message: String
}

/// The lines a task's part holds (``RecordsPart``), one per record:
/// - `append` and `replace`: the record as compact JSON (``JSONWriter/write(_:to:)``);
/// - `merge`: `+KEY<TAB>RECORD`, or `-KEY<TAB>` for a tombstone, KEY canonical
///   (``RecordKey``), so that sorting and merging never parse a record again. Compact JSON
///   holds no raw tab or line break, so the tab and the line end are unambiguous.
extension RecordsRule {
    /// Appends the part lines of the records in `document` (one response) to `output`,
    /// each kept and shaped by ``shaping`` (`added`: its `add` members for the task); returns
    /// how many records it found.
    func partLines(
        of document: JSONNode, added: [(name: String, node: JSONNode)] = [],
        into output: inout [UInt8]
    ) throws(RecordsProblem) -> Int {
        let records = try self.records(in: document)
        let keyTokens = key.map(JSONPointer.tokens)
        let deletedTokens = deleted.map(JSONPointer.tokens)
        for (index, found) in records.enumerated() {
            // A tombstone goes through whatever `where` says (the deletion must reach the
            // file), as it came. The key is read from the record as it came too: validation
            // made sure shaping keeps it where it was.
            let tombstone =
                write == .merge
                && deletedTokens.map {
                    Self.isTombstone(JSONPointer.resolve(tokens: $0, in: found))
                }
                    == true
            if !tombstone, !shaping.keeps(found) { continue }
            let record = tombstone ? found : try shaping.shaped(found, added: added, index: index)
            guard write == .merge, let keyPointer = key, let keyTokens else {
                JSONWriter.write(record, to: &output)
                output.append(0x0A)
                continue
            }
            guard let value = JSONPointer.resolve(tokens: keyTokens, in: found),
                let canonical = RecordKey.canonical(value)
            else {
                throw RecordsProblem(
                    message:
                        "record \(index + 1) of \(records.count) has no key at \(keyPointer) (merge matches records by it): \(Self.shown(found))"
                )
            }
            output.append(tombstone ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            output.append(contentsOf: canonical)
            output.append(0x09)
            if !tombstone { JSONWriter.write(record, to: &output) }
            output.append(0x0A)
        }
        return records.count
    }

    /// The records at `from`. A pointer with `*` needs the array before its first `*` (a
    /// `null` there is an empty list); one without needs a value (`null` is no record).
    func records(in document: JSONNode) throws(RecordsProblem) -> [JSONNode] {
        let tokens = from.split(separator: "/", omittingEmptySubsequences: false)
        if let star = tokens.firstIndex(of: "*") {
            let prefix = tokens[..<star].joined(separator: "/")
            guard let container = JSONPointer.resolve(prefix, in: document) else {
                throw RecordsProblem(
                    message:
                        "found no records at \(from): the body has nothing at \(prefix.isEmpty ? "its root" : prefix)"
                )
            }
            switch container.value {
            case .array: break
            case .null: return []
            default:
                throw RecordsProblem(
                    message:
                        "found no records at \(from): \(prefix.isEmpty ? "the body" : prefix) is \(container.value.typeName), not an array"
                )
            }
            return JSONPointer.resolveAll(from, in: document)
        }
        guard let value = JSONPointer.resolve(from, in: document) else {
            throw RecordsProblem(message: "found no record at \(from): the body has nothing there")
        }
        if case .null = value.value { return [] }
        return [value]
    }

    /// Whether a record's `deleted` value makes it a tombstone: present and not `null`,
    /// `false`, `0` or `""` (so `true`, a `deleted_at` date and `1` are).
    static func isTombstone(_ value: JSONNode?) -> Bool {
        guard let value else { return false }
        switch value.value {
        case .null: return false
        case .bool(let flag): return flag
        case .number(let number): return number != 0
        case .string(let text): return !text.isEmpty
        case .array, .object: return true
        }
    }

    /// The start of a record, for a message.
    private static func shown(_ record: JSONNode) -> String {
        var bytes: [UInt8] = []
        JSONWriter.write(record, to: &bytes)
        let text = String(decoding: bytes.prefix(120), as: UTF8.self)
        return bytes.count > 120 ? text + "…" : text
    }
}
