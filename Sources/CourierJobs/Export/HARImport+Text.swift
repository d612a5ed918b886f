import Courier
import Foundation

/// The text of an imported job: origins, escapes and the file's layout.
extension HARImport {
    static func origin(_ url: URLComponents) -> String {
        let scheme = url.scheme?.lowercased() ?? "http"
        var host = url.percentEncodedHost ?? ""
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }

    static func decoded(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
            .replacingOccurrences(of: "%20", with: "+")
    }

    /// `text` so that a job file's template sends it as it is: each `{` doubled, and each `}`
    /// that closes a doubled one doubled too (``Template``: a `}}` with none open is text).
    static func escaped(_ text: String) -> String {
        guard text.contains("{") || text.contains("}") else { return text }
        var output = ""
        var open = 0
        for character in text {
            switch character {
            case "{":
                output += "{{"
                open += 1
            case "}" where open > 0:
                output += "}}"
                open -= 1
            default:
                output.append(character)
            }
        }
        return output
    }

    /// A JSON body with its strings escaped (every string in `json` is a template) and its
    /// numbers as written.
    static func templateSafe(_ node: JSONNode) -> JSONWriter.Value {
        switch node.value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number): node.numberSource.map(JSONWriter.Value.raw) ?? .double(number)
        case .string(let text): .string(escaped(text))
        case .array(let elements): .array(elements.map(templateSafe))
        case .object(let members): .object(members.map { ($0.key, templateSafe($0.node)) })
        }
    }

    /// The job file: its keys one per line, each task on a line of its own.
    static func render(_ job: [(String, JSONWriter.Value)], tasks: [JSONWriter.Value])
        -> String
    {
        var lines = job.map {
            "  " + JSONWriter.string(.string($0.0)) + ": " + JSONWriter.string($0.1)
        }
        let taskLines = tasks.map { "    " + JSONWriter.string($0) }
        lines.append("  \"tasks\": [\n" + taskLines.joined(separator: ",\n") + "\n  ]")
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }
}
