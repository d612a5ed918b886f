/// RFC 6901 JSON Pointers, as `expect.json` and `paginate` use them.
enum JSONPointer {
    /// Whether `pointer` is an RFC 6901 JSON Pointer: empty, or `/` then tokens.
    static func isValid(_ pointer: String) -> Bool {
        pointer.isEmpty || pointer.hasPrefix("/")
    }

    /// The value at `pointer`, `~1` and `~0` unescaped; array tokens are indexes.
    static func resolve(_ pointer: String, in document: JSONNode) -> JSONNode? {
        guard !pointer.isEmpty else { return document }
        var node = document
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = raw.replacingOccurrences(of: "~1", with: "/")
                .replacingOccurrences(of: "~0", with: "~")
            switch node.value {
            case .object(let members):
                guard let member = members.first(where: { $0.key == token }) else { return nil }
                node = member.node
            case .array(let elements):
                guard let index = Int(token), index >= 0, index < elements.count,
                    token == String(index)
                else { return nil }
                node = elements[index]
            default:
                return nil
            }
        }
        return node
    }
}
