import Courier
import Foundation

/// One entry of a task's `capture`: a value taken from each of its responses (every page, every
/// expansion) for later tasks to use as `{name}` or as a `foreach` source.
struct CaptureRule: Sendable {
    enum Source: Sendable, Hashable {
        /// An RFC 6901 pointer into the JSON body; a `*` token matches every array element.
        case json(String)
        /// A response header (every value of it).
        case header(String)
    }

    var name: String
    var source: Source
    /// Redacted everywhere, like `${env:…}`: a login token.
    var secret: Bool

    /// The values this rule finds in one response. Strings are taken as they are, numbers as
    /// written, booleans as `true`/`false`, objects and arrays as compact JSON; `null` is no
    /// value. A JSON rule on a body that is not JSON is an error.
    func values(in response: HTTPResponse, document: JSONNode?) -> Result<[String], CaptureError> {
        switch source {
        case .header(let name):
            return .success(response.headers.values(for: name))
        case .json(let pointer):
            guard let document else {
                return .failure(
                    CaptureError(
                        message:
                            "capture \(name) reads \(pointer) of a JSON body, but the body is not JSON"
                    ))
            }
            return .success(
                JSONPointer.resolveAll(pointer, in: document).compactMap(Self.text(of:)))
        }
    }

    /// A captured value as text, or `nil` for `null`.
    static func text(of node: JSONNode) -> String? {
        switch node.value {
        case .null: nil
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .number: node.numberSource ?? "0"
        case .array, .object: node.compactText
        }
    }
}

/// Why a response's captures could not be taken.
struct CaptureError: Error {
    let message: String
}
