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
///
/// Refuses `<redacted>` in any value too: what courier writes for a secret it left out (a log,
/// `import --har`'s job, a dry-run plan). Sent, the server would get that word for a password.
enum UnreplacedReferences {
    /// `references`: false when the file had other errors, since a value the decoder refused
    /// was never replaced, and saying so would be a second message for one cause.
    static func check(_ root: JSONNode, references: Bool, context: DecodingContext) {
        Walk(references: references, context: context).visit(root, path: "")
    }

    private static let freeText: Set<String> = ["description", "$schema"]

    /// Each `NAME` of a `${NAME}` in `text` written as a shell names an environment variable
    /// (capitals, digits and `_`, not starting with a digit): text to courier, which a job
    /// likely meant as `${env:NAME}`. A JavaScript template literal's `${total}` is not one.
    static func shellStyleNames(in text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: "}") else { break }
            let name = rest[..<end]
            let isName =
                !name.isEmpty && name.first.map { !$0.isNumber } == true
                && name.allSatisfy {
                    ("A"..."Z").contains($0) || $0 == "_" || ("0"..."9").contains($0)
                }
            if isName { names.append(String(name)) }
            rest = rest[rest.index(after: end)...]
        }
        return names
    }

    private struct Walk {
        let references: Bool
        let context: DecodingContext

        func visit(_ node: JSONNode, path: String) {
            switch node.value {
            case .string(let text):
                if text.contains(Redactor.placeholder) {
                    context.error(
                        path,
                        "holds \(Redactor.placeholder), which courier writes for a secret it left out (an imported or logged request): put a ${env:NAME} or ${file:PATH} reference in its place",
                        at: node)
                    return
                }
                for name in shellStyleNames(in: text) {
                    if sentAsCredentials(path) {
                        context.error(
                            path,
                            "a shell's reference to \(name) would be sent as text (courier does not read them): for the environment variable, write ${env:\(name)}",
                            at: node)
                    } else {
                        context.note(
                            path,
                            "\"${\(name)}\" is sent as text, as written (courier does not read a shell's references); for the environment variable, write ${env:\(name)}",
                            at: node)
                    }
                }
                guard references, !context.replacedAt.contains(SourcePosition(node)),
                    let found = DecodingContext.referenceShape(in: Substring(text))
                else { return }
                context.error(
                    path,
                    "${\(found.kind):…} is not replaced here: references work in the values of the keys docs/job-file.md names (headers, query, path, url, json, body, baseURL, auth…), not in \(lastKey(of: path))",
                    at: node)
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    visit(element, path: "\(path)[\(index)]")
                }
            case .object(let members):
                for member in members where !freeText.contains(member.key) {
                    let memberPath = path.isEmpty ? member.key : "\(path).\(member.key)"
                    if member.key.contains(Redactor.placeholder) {
                        context.error(
                            memberPath,
                            "a key holds \(Redactor.placeholder), which courier writes for a secret it left out: write the name the request needs",
                            at: member.node)
                    }
                    for name in shellStyleNames(in: member.key) {
                        context.note(
                            memberPath,
                            "the key \"${\(name)}\" is sent as written (a key takes no references); for the environment variable's value, put ${env:\(name)} in a value",
                            at: member.node)
                    }
                    if references,
                        let found = DecodingContext.referenceShape(in: Substring(member.key))
                    {
                        context.error(
                            memberPath,
                            "${\(found.kind):…} in a key is not replaced: a name is written as it is; put the reference in a value",
                            at: member.node)
                    }
                    visit(member.node, path: memberPath)
                }
            default:
                break
            }
        }
    }

    /// Whether a value at `path` goes out as a credential or an address, where a shell's
    /// `${NAME}` cannot be meant as text: `auth`, and the job's own `headers`, `baseURL` and
    /// `proxy` (trial OO: `"auth": {"bearer": "${API_TOKEN}"}` ran every night with the word
    /// for a token, and only `validate` warned). A task's `headers`, `path` and `query` are
    /// templates, where `{NAME}` is refused already.
    static func sentAsCredentials(_ path: String) -> Bool {
        let components = path.split(separator: ".").map { $0.split(separator: "[").first ?? $0 }
        if components.contains(where: { $0 == "auth" || $0 == "oauth2" }) { return true }
        guard components.first != "tasks" else { return false }
        return components.contains { $0 == "headers" || $0 == "baseURL" || $0 == "proxy" }
    }

    /// `"save"` for `tasks[0].save`, `a list` for `…values[2]`.
    private static func lastKey(of path: String) -> String {
        if path.hasSuffix("]") { return "a list's values" }
        let key = path.split(separator: ".").last.map(String.init) ?? path
        return "\"\(key)\""
    }
}
