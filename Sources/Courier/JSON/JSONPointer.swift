/// RFC 6901 JSON Pointers, as `expect.json` and `paginate` use them.
package enum JSONPointer {
    /// Whether `pointer` is an RFC 6901 JSON Pointer: empty, or `/` then tokens.
    package static func isValid(_ pointer: String) -> Bool {
        (pointer.isEmpty || pointer.hasPrefix("/")) && !hasBadEscape(pointer)
    }

    /// Whether a `~` in `pointer` is not `~0` or `~1` (RFC 6901 §3): such a pointer matches
    /// nothing, silently (trial HH: `/i~d` passed validation and kept no record).
    package static func hasBadEscape(_ pointer: String) -> Bool {
        var bytes = pointer.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "~") else { continue }
            guard let escaped = bytes.next(),
                escaped == UInt8(ascii: "0") || escaped == UInt8(ascii: "1")
            else { return true }
        }
        return false
    }

    /// Why `pointer` is not valid, for a message's end: its escape, or nothing more to say.
    package static func problem(_ pointer: String) -> String {
        hasBadEscape(pointer)
            ? " (a ~ in a JSON Pointer is ~0 for ~ or ~1 for /, RFC 6901)" : ""
    }

    /// The value at `pointer`, `~1` and `~0` unescaped; array tokens are indexes. Beyond RFC
    /// 6901, a negative index counts from the end: `/data/-1/id` is the last element's `id`
    /// (a cursor API's "after the last item"). RFC 6901's `-` names the element after the last
    /// one, which never exists, so it resolves to nothing.
    package static func resolve(_ pointer: String, in document: JSONNode) -> JSONNode? {
        resolve(tokens: tokens(pointer), in: document)
    }

    /// The unescaped tokens of `pointer` (`~1` is `/`, `~0` is `~`), for resolving one pointer
    /// in many documents (``resolve(tokens:in:)``): a records merge resolves its key in each of
    /// a million records, and unescaping each time was most of that.
    package static func tokens(_ pointer: String) -> [String] {
        guard !pointer.isEmpty else { return [] }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    /// ``resolve(_:in:)`` with the pointer's ``tokens(_:)``.
    package static func resolve(tokens: [String], in document: JSONNode) -> JSONNode? {
        var node = document
        for token in tokens {
            switch node.value {
            case .object(let members):
                guard let member = members.first(where: { $0.key == token }) else { return nil }
                node = member.node
            case .array(let elements):
                guard let index = Self.index(token, count: elements.count) else { return nil }
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
                } else if let position = Self.index(token, count: elements.count) {
                    walk(elements[position], index + 1)
                }
            default:
                break
            }
        }
        walk(document, 0)
        return found
    }

    /// The array position `token` names among `count` elements: `0`, `1`… from the start
    /// (no leading zeros, as RFC 6901 says), `-1`, `-2`… from the end.
    private static func index(_ token: some StringProtocol, count: Int) -> Int? {
        guard let value = Int(token), String(value) == token else { return nil }
        let position = value < 0 ? count + value : value
        return position >= 0 && position < count ? position : nil
    }

    /// Whether `pointer` has RFC 6901's `-` token, which names the element after an array's
    /// last: it never resolves, and a job that writes it means `-1`, the last element.
    package static func hasAfterLastToken(_ pointer: String) -> Bool {
        pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains("-")
    }
}
