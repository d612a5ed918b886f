import Courier

/// Where a string stands in the job file: how the decoder knows which strings it replaced
/// references in.
struct SourcePosition: Hashable {
    let line: Int
    let column: Int

    init(_ node: JSONNode) {
        line = node.line
        column = node.column
    }
}

/// Refuses a `${env:…}`, `${file:…}` or `${env-public:…}` (or a typo of one) where the decoder
/// replaces none: in an object's key (a query parameter's or header's name, a JSON body's
/// key) and in a key that takes no references (`save`, `id`, `expect`, a `foreach` list).
/// Left as it is, it would go to the server or the disk as text, silently, and a typo is never
/// ignored. `description` and `$schema` are free text.
enum UnreplacedReferences {
    static func check(_ root: JSONNode, context: DecodingContext) {
        walk(root, path: "", context: context)
    }

    private static let freeText: Set<String> = ["description", "$schema"]

    private static func walk(_ node: JSONNode, path: String, context: DecodingContext) {
        switch node.value {
        case .string(let text):
            guard !context.replacedAt.contains(SourcePosition(node)),
                let found = DecodingContext.referenceShape(in: Substring(text))
            else { return }
            context.error(
                path,
                "${\(found.kind):…} is not replaced here: references work in the values of the keys docs/job-file.md names (headers, query, path, url, json, body, baseURL, auth…), not in \(lastKey(of: path))",
                at: node)
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                walk(element, path: "\(path)[\(index)]", context: context)
            }
        case .object(let members):
            for member in members where !freeText.contains(member.key) {
                let memberPath = path.isEmpty ? member.key : "\(path).\(member.key)"
                if let found = DecodingContext.referenceShape(in: Substring(member.key)) {
                    context.error(
                        memberPath,
                        "${\(found.kind):…} in a key is not replaced: a name is written as it is; put the reference in a value",
                        at: member.node)
                }
                walk(member.node, path: memberPath, context: context)
            }
        default:
            break
        }
    }

    /// `"save"` for `tasks[0].save`, `a list` for `…values[2]`.
    private static func lastKey(of path: String) -> String {
        if path.hasSuffix("]") { return "a list's values" }
        let key = path.split(separator: ".").last.map(String.init) ?? path
        return "\"\(key)\""
    }
}
