extension JSONPointer {
    /// `document` with `value` at `pointer`: a member replaced, or added last when the object
    /// lacks it, objects made on the way for members that are missing (`/variables/after` in
    /// a body without `variables`); an array element replaced by its index. `nil` when the
    /// pointer goes through a value that is neither (a string, a number) or past an array's
    /// end, or is empty (the whole document is never replaced).
    package static func setting(_ value: JSONNode, at pointer: String, in document: JSONNode)
        -> JSONNode?
    {
        let tokens = tokens(pointer)
        guard !tokens.isEmpty else { return nil }
        return setting(value, tokens: tokens[...], in: document)
    }

    private static func setting(
        _ value: JSONNode, tokens: ArraySlice<String>, in node: JSONNode
    ) -> JSONNode? {
        guard let token = tokens.first else { return value }
        let rest = tokens.dropFirst()
        var node = node
        switch node.value {
        case .object(var members):
            if let place = members.firstIndex(where: { $0.key == token }) {
                guard let changed = setting(value, tokens: rest, in: members[place].node) else {
                    return nil
                }
                members[place].node = changed
            } else {
                guard let made = setting(value, tokens: rest, in: JSONNode(.object([]))) else {
                    return nil
                }
                members.append((token, made))
            }
            node.value = .object(members)
        case .array(var elements):
            guard let index = Int(token), elements.indices.contains(index),
                let changed = setting(value, tokens: rest, in: elements[index])
            else { return nil }
            elements[index] = changed
            node.value = .array(elements)
        default:
            return nil
        }
        return node
    }
}
