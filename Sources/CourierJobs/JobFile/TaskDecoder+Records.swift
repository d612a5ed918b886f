import Courier
import Foundation

/// `records`: the items of each response, written as JSON lines into a file under `outputDir`.
extension TaskDecoder {
    static let writeForms = "\"append\", \"replace\" or \"merge\""

    mutating func readRecords(conditional: Bool, paginated: Bool = false) -> RecordsRule? {
        guard let node = reader.take("records") else { return nil }
        let path = "\(self.path).records"
        guard var inner = NodeReader(node, path: path, keys: JobKeys.records, context: context)
        else { return nil }
        defer { inner.rejectUnknownKeys() }
        let from = Self.recordsPointer(&inner, "from", path: path, required: true, star: true)
        let toNode = inner.take("to")
        let to = inner.string("to", required: true)
        if let to, let toNode {
            checkVariables(to, key: "records.to", at: toNode)
            if let problem = RecordsRule.problem(with: to) {
                context.error("\(path).to", problem, at: toNode)
            }
        }
        let writeNode = inner.take("write")
        let write = inner.choice("write", of: RecordsRule.Write.self)
        if writeNode == nil {
            context.error("\(path).write", "is required: \(Self.writeForms)", at: node)
        }
        let key = Self.recordsPointer(&inner, "key", path: path, required: false, star: false)
        let deleted = Self.recordsPointer(
            &inner, "deleted", path: path, required: false, star: false)
        switch write {
        case .merge:
            if key == nil, inner.take("key") == nil {
                context.error(
                    "\(path).key",
                    "is required with \"write\": \"merge\": a JSON Pointer to each record's primary key, such as \"/id\"",
                    at: node)
            }
        case .append, .replace:
            for (name, value) in [("key", key), ("deleted", deleted)] where value != nil {
                context.error(
                    "\(path).\(name)",
                    "applies to \"write\": \"merge\" only (records are matched by key there)",
                    at: inner.take(name) ?? node)
            }
        case nil:
            break
        }
        if conditional, let write, write != .merge {
            context.error(
                "\(path).write",
                "\"\(write.rawValue)\" cannot be combined with conditional: a 304 has no records, and \(write == .replace ? "replace would drop that task's records from the file" : "append could never add the records of a body whose run failed elsewhere"); use \"merge\"",
                at: writeNode ?? node)
        }
        if conditional, paginated {
            // A 304 for page 1 confirms every page, but only page 1's validators are kept:
            // which saved pages the listing now has is not known, and records taken again
            // from stale pages past its end could undo newer ones (trial L: every 304 failed).
            context.error(
                path,
                "cannot be combined with conditional on a paginated task: a 304 confirms the listing's pages without saying which saved pages they are; use \"since\" for an incremental listing with records",
                at: node)
        }
        let shaping = readShaping(&inner, path: path, key: write == .merge ? key : nil)
        // Taken before the guard: a wrong `write` made `csv` "unknown; did you mean csv?".
        let csvNode = inner.take("csv")
        guard let from, let to, let write else { return nil }
        let csv = csvNode.flatMap { readCSV($0, path: "\(path).csv", shaping: shaping) }
        var rule = RecordsRule(from: from, to: to, write: write, key: key, deleted: deleted)
        rule.shaping = shaping
        rule.csv = csv
        if csv != nil, !to.hasSuffix(".jsonl") {
            context.error(
                "\(path).to",
                "with csv, the records file must end in .jsonl (its CSV is the same name, .csv): \"\(to)\"",
                at: toNode)
        }
        return rule
    }

    /// `csv`: the columns, named, or `true` for the records as `select` (then `rename` and
    /// `add`) shapes them.
    private func readCSV(_ node: JSONNode, path: String, shaping: RecordShaping) -> [String]? {
        switch node.value {
        case .bool(true):
            guard let select = shaping.select else {
                context.error(
                    path,
                    "true takes its columns from select, which this task has not: name them, such as [\"id\", \"name\"]",
                    at: node)
                return nil
            }
            // A member renamed onto another selected one replaces it: one column of it.
            var seen = Set<String>()
            let renamed = select.map { name in
                shaping.rename.first { $0.from == name }?.to ?? name
            }.filter { seen.insert($0).inserted }
            return renamed.filter { name in !shaping.add.contains { $0.name == name } }
                + shaping.add.map(\.name)
        case .array(let elements) where !elements.isEmpty:
            var columns: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let name) = element.value, !name.isEmpty,
                    !columns.contains(name)
                else {
                    context.error(
                        "\(path)[\(index)]",
                        "expected a member name, each once, found \(NodeReader.describe(element))",
                        at: element)
                    continue
                }
                if let problem = Self.emptyColumn(name, shaping: shaping) {
                    context.error("\(path)[\(index)]", problem, at: element)
                }
                columns.append(name)
            }
            return columns
        default:
            context.error(
                path,
                "expected true (the columns of select) or an array of member names, found \(NodeReader.describe(node))",
                at: node)
            return nil
        }
    }

    /// Why the CSV column `name` would be empty in every row, the records as `shaping` shapes
    /// them having no such member (trial NNN: a column of a renamed member validated and came
    /// out empty); `nil` when a record may have it.
    static func emptyColumn(_ name: String, shaping: RecordShaping) -> String? {
        // What `select` and `drop` leave for the renames, which happen all at once.
        let kept = { (member: String) in
            (shaping.select?.contains(member) ?? true) && !shaping.drop.contains(member)
        }
        if shaping.add.contains(where: { $0.name == name }) { return nil }
        if let source = shaping.rename.first(where: { $0.to == name }) {
            // A swap's other side (trial QQQ: `a` ↔ `b` with `b` not selected).
            guard !kept(source.from) else { return nil }
            return
                "column \"\(name)\" would be empty in every row: rename gives it \"\(source.from)\", which \(shaping.drop.contains(source.from) ? "drop removes" : "select leaves out")"
        }
        let why: String
        if let renamed = shaping.rename.first(where: { $0.from == name }) {
            why = "rename makes it \"\(renamed.to)\": name the column \"\(renamed.to)\""
        } else if shaping.drop.contains(name) {
            why = "drop removes it"
        } else if let select = shaping.select, !select.contains(name) {
            why = "select leaves it out"
        } else {
            return nil
        }
        return "column \"\(name)\" would be empty in every row: \(why)"
    }

    /// A pointer key of `records`; `star`: whether `*` (every element) may appear.
    private static func recordsPointer(
        _ reader: inout NodeReader, _ key: String, path: String, required: Bool, star: Bool
    ) -> String? {
        guard let node = reader.take(key) else {
            if required {
                reader.context.error(
                    "\(path).\(key)", "is required: a JSON Pointer such as \"/items/*\"",
                    at: reader.node)
            }
            return nil
        }
        guard case .string(let text) = node.value else {
            reader.context.error(
                "\(path).\(key)",
                "expected a JSON Pointer such as \(star ? "\"/items/*\"" : "\"/id\""), found \(node.value.typeName)",
                at: node)
            return nil
        }
        guard JSONPointer.isValid(text) else {
            reader.context.error(
                "\(path).\(key)",
                "expected a JSON Pointer such as \(star ? "\"/items/*\"" : "\"/id\""), found \"\(text)\"\(JSONPointer.problem(text))",
                at: node)
            return nil
        }
        guard let pointer = pointer(text, at: "\(path).\(key)", node, context: reader.context)
        else { return nil }
        if !star, pointer.split(separator: "/", omittingEmptySubsequences: false).contains("*") {
            reader.context.error(
                "\(path).\(key)",
                "\"\(text)\": names one value inside each record; * (every element) belongs in from",
                at: node)
            return nil
        }
        return pointer
    }
}
