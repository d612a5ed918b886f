import Courier

/// A record shaped as its task's `records` says (``RecordShaping``), as a part line is made.
extension RecordShaping {
    /// `record` shaped, with `added` (the `add` members, rendered for the task) last.
    /// - Parameter index: the record's place in its response, for messages.
    func shaped(_ record: JSONNode, added: [(name: String, node: JSONNode)], index: Int)
        throws(RecordsProblem) -> JSONNode
    {
        guard reshapes else { return record }
        guard case .object(var members) = record.value else {
            throw RecordsProblem(
                message:
                    "record \(index + 1) is \(record.value.typeName), not an object: select, drop, rename and add shape objects"
            )
        }
        if let select {
            members = select.compactMap { name in members.first { $0.key == name } }
        }
        if !drop.isEmpty { members.removeAll { drop.contains($0.key) } }
        // All renames at once, each of a member as the record had it, in its place: applied
        // in turn, a chain (`a` → `b`, `b` → `c`) lost a member, a swap kept neither, and the
        // outcome hung on the order of the keys (trial PPP). A member a rename names is
        // replaced, unless it is renamed away itself.
        let moving = rename.filter { pair in members.contains { $0.key == pair.from } }
        if !moving.isEmpty {
            let targets = Set(moving.map(\.to))
            let newName = Dictionary(moving.map { ($0.from, $0.to) }) { first, _ in first }
            members = members.compactMap { member in
                if let to = newName[member.key] { return (to, member.node) }
                return targets.contains(member.key) ? nil : member
            }
        }
        for (name, node) in added {
            members.removeAll { $0.key == name }
            members.append((name, node))
        }
        return JSONNode(.object(members))
    }
}
