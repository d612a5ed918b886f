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
        for (from, to) in rename where members.contains(where: { $0.key == from }) {
            members.removeAll { $0.key == to && to != from }
            if let place = members.firstIndex(where: { $0.key == from }) { members[place].key = to }
        }
        for (name, node) in added {
            members.removeAll { $0.key == name }
            members.append((name, node))
        }
        return JSONNode(.object(members))
    }
}
