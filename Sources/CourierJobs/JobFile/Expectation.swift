import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a task's response must show besides its status (`expect.json`, `expect.headers`,
/// `expect.bodyContains`, `expect.maxMs`), as a pure value: ``failure(for:)`` says what differed.
package struct Expectation: Sendable {
    /// JSON Pointer (RFC 6901) → the exact JSON value there.
    package var json: [(pointer: String, value: JSONNode)] = []
    /// Header name → value, `*` and `?` as globs.
    package var headers: [(name: String, pattern: String)] = []
    /// Texts the body must contain, each.
    package var bodyContains: [String] = []
    /// The most the exchange may take, in milliseconds.
    package var maxMs: Double?

    package init() {}

    package var isEmpty: Bool {
        json.isEmpty && headers.isEmpty && bodyContains.isEmpty && maxMs == nil
    }

    /// Why `response` does not meet the expectation, or `nil` when it does.
    ///
    /// - Parameter scrub: applied to each value shown before it is shortened: a value cut
    ///   first could end inside a secret, and the cut-off prefix of a token would then escape
    ///   the redactor that sees only whole secrets.
    package func failure(
        for response: HTTPResponse, durationMs: Double, scrub: (String) -> String = { $0 }
    ) -> String? {
        guard !isEmpty else { return nil }
        if let maxMs, durationMs > maxMs {
            return "took \(Int(durationMs.rounded())) ms, more than maxMs \(Self.number(maxMs))"
        }
        // A 304 carries neither the body nor its headers: the saved copy it confirms was
        // checked when it came.
        guard response.status != 304 else { return nil }
        for (name, pattern) in headers {
            guard let value = response.headers[name] else {
                return "expected header \(name) matching \"\(pattern)\", found no such header"
            }
            if fnmatch(pattern, value, 0) != 0 {
                return
                    "expected header \(name) matching \"\(pattern)\", found \"\(Self.shortened(scrub(value)))\""
            }
        }
        for text in bodyContains where response.body.range(of: Data(text.utf8)) == nil {
            return "expected the body to contain \"\(text)\"; it does not"
        }
        guard !json.isEmpty else { return nil }
        guard let document = try? JSONParser.parse([UInt8](response.body)) else {
            return
                "expected a JSON body for \(json.map(\.pointer).joined(separator: ", ")); the body is not JSON"
        }
        for (pointer, expected) in json {
            guard let found = JSONPointer.resolve(pointer, in: document) else {
                return
                    "expected \(Self.show(pointer)) to be \(Self.text(expected, scrub)), found nothing there"
            }
            if found.value != expected.value {
                return
                    "expected \(Self.show(pointer)) to be \(Self.text(expected, scrub)), found \(Self.text(found, scrub))"
            }
        }
        return nil
    }

    private static func show(_ pointer: String) -> String { pointer.isEmpty ? "the body" : pointer }

    /// A value as JSON text, for messages: secrets scrubbed, then long values shortened.
    static func text(_ node: JSONNode, _ scrub: (String) -> String = { $0 }) -> String {
        shortened(scrub(node.compactText))
    }

    private static func shortened(_ text: String) -> String {
        text.count > 120 ? String(text.prefix(117)) + "…" : text
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
