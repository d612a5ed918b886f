import Courier
import Foundation

/// A request as a runnable `curl` command line, with every secret written as a reference to
/// an environment variable (`"Authorization: Bearer ${API_TOKEN}"`), never as its value.
///
/// A secret found verbatim in the environment is named after its variable; any other secret
/// (a `--header` value, say) becomes `${COURIER_SECRET_n}`, and `notes` says which is which so
/// the engineer can export it.
struct CurlCommand {
    /// Secret value → variable name, longest values first so that a secret holding another is
    /// replaced whole.
    private var names: [(value: String, name: String)]
    /// Comment lines for the secrets that had no variable of their own.
    private(set) var notes: [String] = []

    init(secrets: Set<String>, environment: [String: String]) {
        var names: [(String, String)] = []
        var counter = 0
        var notes: [String] = []
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            if let name = environment.filter({ $0.value == secret }).keys.sorted().first {
                names.append((secret, name))
            } else {
                counter += 1
                names.append((secret, "COURIER_SECRET_\(counter)"))
                notes.append(
                    "# set COURIER_SECRET_\(counter) to the secret it stands for (not printed)")
            }
        }
        self.names = names
        self.notes = notes
    }

    /// `curl -sS -X METHOD "URL" -H "…" --data-binary "…"` for the request.
    func command(for request: HTTPRequest) -> String {
        var parts = [
            "curl", "-sS", "-X", quote(request.method.rawValue), quote(request.url.absoluteString),
        ]
        for field in request.headers {
            parts.append("-H")
            parts.append(quote("\(field.name): \(field.value)"))
        }
        if request.headers.contains("Accept-Encoding") { parts.append("--compressed") }
        var prefix = ""
        if let body = request.body {
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                parts.append("--data-binary")
                parts.append(quote(text))
            } else {
                // Bytes that are not text travel as base64 through a pipe.
                prefix = "printf '%s' '\(body.base64EncodedString())' | base64 -d | "
                parts.append("--data-binary")
                parts.append("@-")
            }
        }
        return prefix + parts.joined(separator: " ")
    }

    /// A double-quoted shell word: `\`, `"`, `$` and `` ` `` escaped, secrets as `${NAME}`.
    func quote(_ text: String) -> String {
        var output = "\""
        var rest = Substring(text)
        while !rest.isEmpty {
            if let (value, name) = names.first(where: { rest.hasPrefix($0.value) }) {
                output += "${\(name)}"
                rest = rest.dropFirst(value.count)
                continue
            }
            let character = rest.removeFirst()
            switch character {
            case "\\", "\"", "$", "`": output += "\\" + String(character)
            default: output.append(character)
            }
        }
        return output + "\""
    }
}
