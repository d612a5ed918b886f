/// RFC 6901 JSON Pointers, as `expect.json` and `paginate` use them.
package enum JSONPointer {
    /// Whether `pointer` is an RFC 6901 JSON Pointer: empty, or `/` then tokens.
    package static func isValid(_ pointer: String) -> Bool {
        pointer.isEmpty || pointer.hasPrefix("/")
    }

    /// The value at `pointer`, `~1` and `~0` unescaped; array tokens are indexes.
    package static func resolve(_ pointer: String, in document: JSONNode) -> JSONNode? {
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

    /// Every value at `pointer`, where a `*` token matches each element of an array (in
    /// order): `/items/*/id` is the `id` of every item. Without `*`, at most one value.
    package static func resolveAll(_ pointer: String, in document: JSONNode) -> [JSONNode] {
        guard !pointer.isEmpty else { return [document] }
        let tokens = pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            .map {
                $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(
                    of: "~0", with: "~")
            }
        var found: [JSONNode] = []
        func walk(_ node: JSONNode, _ index: Int) {
            guard index < tokens.count else {
                found.append(node)
                return
            }
            let token = tokens[index]
            switch node.value {
            case .object(let members):
                if let member = members.first(where: { $0.key == token }) {
                    walk(member.node, index + 1)
                }
            case .array(let elements):
                if token == "*" {
                    for element in elements { walk(element, index + 1) }
                } else if let position = Int(token), position >= 0, position < elements.count,
                    token == String(position)
                {
                    walk(elements[position], index + 1)
                }
            default:
                break
            }
        }
        walk(document, 0)
        return found
    }
}
