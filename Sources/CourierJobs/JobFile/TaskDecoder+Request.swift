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
        JobDecoder.validateHeaderNames(headers, path: "\(path).headers", at: node, context: context)
        for header in headers {
            checkVariables(header.value, key: "headers.\(header.name)", at: nodes[header.name])
        }
        return headers
    }
}
