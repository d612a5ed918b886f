import Courier
import Foundation

/// `records`' `where`, `select`, `drop`, `rename` and `add` (``RecordShaping``).
extension TaskDecoder {
    /// Reads the shaping keys of `records` from `inner`; `key`: a merge's key pointer, whose
    /// member shaping must keep under its name (later runs find records in the file by it).
    mutating func readShaping(_ inner: inout NodeReader, path: String, key: String?)
        -> RecordShaping
    {
        var shaping = RecordShaping()
        if let node = inner.take("where") {
            shaping.conditions = conditions(node, path: "\(path).where")
        }
        if let node = inner.take("select") {
            shaping.select = names(node, path: "\(path).select")
        }
        if let node = inner.take("drop") {
            shaping.drop = names(node, path: "\(path).drop") ?? []
        }
        if let node = inner.take("rename") {
            shaping.rename = pairs(node, path: "\(path).rename").map { ($0.0, $0.1) }
            // Two members renamed to one name: one would replace the other (trial NNN).
            for (index, pair) in shaping.rename.enumerated()
            where shaping.rename[..<index].contains(where: { $0.to == pair.to }) {
                let from = shaping.rename.filter { $0.to == pair.to }.map { "\"\($0.from)\"" }
                context.error(
                    "\(path).rename.\(pair.from)",
                    "\(from.joined(separator: " and ")) are both renamed to \"\(pair.to)\", and one would replace the other: give each its own name",
                    at: node)
            }
        }
        if let node = inner.take("add") {
            shaping.add = pairs(node, path: "\(path).add").map { ($0.0, $0.1) }
            for (name, template) in shaping.add {
                checkVariables(template, key: "records.add.\(name)", at: node)
            }
        }
        if let select = shaping.select {
            for name in shaping.drop where select.contains(name) {
                context.error(
                    "\(path).drop", "\"\(name)\" is both selected and dropped: keep it in one",
                    at: inner.node)
            }
        }
        if let key, let member = JSONPointer.tokens(key).first,
            let problem = Self.keyProblem(member, in: shaping)
        {
            context.error(
                path,
                "merge finds records by \(key), so shaping must keep \"\(member)\" under its name: \(problem)",
                at: inner.node)
        }
        return shaping
    }

    /// Why `shaping` loses a merge key's member `name`, or `nil`.
    static func keyProblem(_ name: String, in shaping: RecordShaping) -> String? {
        if let select = shaping.select, !select.contains(name) { return "select leaves it out" }
        if shaping.drop.contains(name) { return "drop removes it" }
        if shaping.rename.contains(where: { $0.from == name || $0.to == name }) {
            return "rename changes it"
        }
        if shaping.add.contains(where: { $0.name == name }) { return "add replaces it" }
        return nil
    }

    /// `where`: pointer → the value a kept record has there.
    private func conditions(_ node: JSONNode, path: String) -> [(pointer: String, value: JSONNode)]
    {
        guard case .object(let members) = node.value, !members.isEmpty else {
            context.error(
                path,
                "expected an object of JSON Pointers and values, such as {\"/status\": \"active\"}, found \(NodeReader.describe(node))",
                at: node)
            return []
        }
        var found: [(pointer: String, value: JSONNode)] = []
        for member in members {
            guard JSONPointer.isValid(member.key), !JSONPointer.tokens(member.key).contains("*")
            else {
                let why =
                    JSONPointer.isValid(member.key)
                    ? ": * (every element) cannot be matched, name one value such as \"/tags/0\""
                    : ", such as \"/status\"\(JSONPointer.problem(member.key))"
                context.error(
                    "\(path).\(member.key)", "expected a JSON Pointer into each record\(why)",
                    at: member.node)
                continue
            }
            found.append((member.key, member.node))
        }
        return found
    }

    /// A non-empty array of member names, none repeated.
    private func names(_ node: JSONNode, path: String) -> [String]? {
        guard case .array(let elements) = node.value, !elements.isEmpty else {
            context.error(
                path,
                "expected a non-empty array of member names, found \(NodeReader.describe(node))",
                at: node)
            return nil
        }
        var names: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let name) = element.value, !name.isEmpty else {
                context.error(
                    "\(path)[\(index)]",
                    "expected a member name, found \(NodeReader.describe(element))", at: element)
                continue
            }
            if let problem = Self.pointerProblem(name) {
                context.error("\(path)[\(index)]", problem, at: element)
            }
            if names.contains(name) {
                context.error("\(path)[\(index)]", "\"\(name)\" is named twice", at: element)
            }
            names.append(name)
        }
        return names
    }

    /// A non-empty object of strings, as name → text pairs in order.
    private func pairs(_ node: JSONNode, path: String) -> [(String, String)] {
        guard case .object(let members) = node.value, !members.isEmpty else {
            context.error(
                path,
                "expected a non-empty object of names and texts, found \(NodeReader.describe(node))",
                at: node)
            return []
        }
        var pairs: [(String, String)] = []
        for member in members {
            guard case .string(let text) = member.node.value, !text.isEmpty, !member.key.isEmpty
            else {
                context.error(
                    "\(path).\(member.key)",
                    "expected a non-empty text, found \(NodeReader.describe(member.node))",
                    at: member.node)
                continue
            }
            pairs.append((member.key, text))
            if let problem = Self.pointerProblem(member.key) {
                context.error("\(path).\(member.key)", problem, at: member.node)
            }
        }
        return pairs
    }

    /// Why `name` looks like a JSON Pointer where a member name belongs, or `nil`: `where`
    /// takes pointers, the others names, and a pointer here would match nothing, silently.
    static func pointerProblem(_ name: String) -> String? {
        guard name.hasPrefix("/") else { return nil }
        let member = name.dropFirst().split(separator: "/").first.map(String.init) ?? "name"
        return
            "expected a member name at the record's top level, such as \"\(member)\", found the JSON Pointer \"\(name)\" (only where takes pointers)"
    }
}
