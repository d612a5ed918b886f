import Courier
import Foundation

/// `id`, `method`, `path` or `url`, `query` and `headers`: what the request is sent to.
extension TaskDecoder {
    mutating func readID() -> String {
        let idNode = reader.take("id")
        let read = reader.string("id", required: true)
        // Said once: a number is "expected a string", not also empty (trial EEE).
        if let idNode, read?.isEmpty == true { reader.fail("id", "may not be empty", at: idNode) }
        let id = read ?? ""
        checkVariables(id, key: "id", at: idNode)
        return id
    }

    mutating func readMethod() -> HTTPMethod {
        guard let methodNode = reader.take("method"), let text = reader.string("method") else {
            return .get
        }
        if let known = Self.methods.first(where: { $0.rawValue == text }) { return known }
        let hint =
            Self.methods.first { $0.rawValue == text.uppercased() }.map {
                "; did you mean \"\($0)\"?"
            } ?? ""
        reader.fail(
            "method",
            "unknown method \"\(text)\", expected one of \(Self.methods.map(\.rawValue).joined(separator: ", "))\(hint)",
            at: methodNode)
        return .get
    }

    /// `path` (joined to the job's `baseURL`) or `url`: exactly one.
    mutating func readTarget() -> TaskSpec.Target {
        let pathNode = reader.take("path")
        let urlNode = reader.take("url")
        switch (reader.string("path"), reader.string("url")) {
        case (let value?, nil):
            if !defaults.hasBaseURL {
                reader.fail(
                    "path", "needs the job's \"baseURL\" (or use \"url\" for an absolute URL)",
                    at: pathNode!)
            }
            checkVariables(value, key: "path", at: pathNode)
            if let scheme = Self.scheme(of: value) {
                // Joined to nothing, an absolute URL would take the job's auth to its host
                // (trial FFF): the job file says so with `url`, where a reader sees it.
                reader.fail(
                    "path",
                    "starts with \"\(scheme):\", an absolute URL, which is not joined to baseURL; give it as \"url\" (or write a path whose first segment holds a colon as \"/\(scheme):…\")",
                    at: pathNode!)
            }
            return .path(value)
        case (nil, let value?):
            checkVariables(value, key: "url", at: urlNode)
            if Template(value).variables.isEmpty, Origin.httpURL(value) == nil {
                reader.fail(
                    "url", "expected an absolute http or https URL, found \"\(value)\"",
                    at: urlNode!)
            }
            return .url(value)
        case (.some, .some):
            context.error(path, "has both \"path\" and \"url\"; give one", at: node)
        case (nil, nil):
            if pathNode == nil && urlNode == nil {
                context.error(path, "needs \"path\" (joined to baseURL) or \"url\"", at: node)
            }
        }
        return .path("/")
    }

    /// The scheme the literal start of a path template begins with (a letter, then letters,
    /// digits, `+`, `-` or `.`, then `:`, RFC 3986 §3.1), or `nil`.
    static func scheme(of path: String) -> Substring? {
        let literal = path.prefix { $0 != "{" }
        guard let colon = literal.firstIndex(of: ":"), let first = literal.first,
            first.isASCII, first.isLetter
        else { return nil }
        let scheme = literal[..<colon]
        let allowed = scheme.allSatisfy {
            $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".")
        }
        return allowed ? scheme : nil
    }

    mutating func readQuery() -> [(name: String, value: String)] {
        let nodes = reader.memberNodes(of: "query")
        let query = reader.stringMap("query") ?? []
        for item in query {
            checkVariables(item.value, key: "query.\(item.name)", at: nodes[item.name])
        }
        return query
    }

    mutating func readHeaders() -> [(name: String, value: String)] {
        let nodes = reader.memberNodes(of: "headers")
        let headers = reader.stringMap("headers") ?? []
        JobDecoder.validateHeaderNames(
            headers, path: "\(path).headers", at: node, nodes: nodes, context: context)
        for header in headers {
            checkVariables(header.value, key: "headers.\(header.name)", at: nodes[header.name])
        }
        return headers
    }
}
