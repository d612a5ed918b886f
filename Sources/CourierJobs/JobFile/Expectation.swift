import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a task's response must show besides its status (`expect.json`, `expect.headers`,
/// `expect.bodyContains`, `expect.maxMs`), as a pure value: ``failure(for:)`` says what differed.
struct Expectation: Sendable {
    /// JSON Pointer (RFC 6901) → the exact JSON value there.
    var json: [(pointer: String, value: JSONNode)] = []
    /// Header name → value, `*` and `?` as globs.
    var headers: [(name: String, pattern: String)] = []
    /// Texts the body must contain, each.
    var bodyContains: [String] = []
    /// The most the exchange may take, in milliseconds.
    var maxMs: Double?
    /// Whether an expected value names a task's `{variable}`: the task builder then renders a
    /// copy per task.
    var isTemplated = false
    /// The `expect.json` pointers whose expected value was one whole `{variable}`: the value
    /// then also matches a number, `true`, `false` or `null` of the same text, since a
    /// variable is text and `"/id": "{id}"` is how a job says "the id I asked for".
    var wholeVariables: Set<String> = []

    init() {}

    /// Every text that may hold `{variables}`: header patterns, `bodyContains` and the strings
    /// inside expected JSON values.
    var templateTexts: [String] {
        var texts = headers.map(\.pattern) + bodyContains
        func strings(_ node: JSONNode) {
            switch node.value {
            case .string(let text): texts.append(text)
            case .array(let elements): elements.forEach(strings)
            case .object(let members): members.forEach { strings($0.node) }
            default: break
            }
        }
        json.forEach { strings($0.value) }
        return texts
    }

    /// This expectation with the task's variables put in its values.
    func rendered(_ bindings: [String: String]) -> Expectation {
        var copy = self
        func render(_ node: JSONNode) -> JSONNode {
            var node = node
            switch node.value {
            case .string(let text): node.value = .string(Template(text).render(bindings))
            case .array(let elements): node.value = .array(elements.map(render))
            case .object(let members):
                node.value = .object(members.map { ($0.key, render($0.node)) })
            default: break
            }
            return node
        }
        copy.json = json.map { pair in
            if case .string(let text) = pair.value.value, Template(text).isOneVariable {
                copy.wholeVariables.insert(pair.pointer)
            }
            return (pair.pointer, render(pair.value))
        }
        copy.headers = headers.map { ($0.name, Template($0.pattern).render(bindings)) }
        copy.bodyContains = bodyContains.map { Template($0).render(bindings) }
        copy.isTemplated = false
        return copy
    }

    var isEmpty: Bool {
        json.isEmpty && headers.isEmpty && bodyContains.isEmpty && maxMs == nil
    }

    /// Why `response` does not meet the expectation, or `nil` when it does.
    ///
    /// - Parameter scrub: applied to each value shown before it is shortened: a value cut
    ///   first could end inside a secret, and the cut-off prefix of a token would then escape
    ///   the redactor that sees only whole secrets.
    func failure(
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
            if found.value != expected.value
                && !(wholeVariables.contains(pointer) && Self.sameText(found, expected))
            {
                return
                    "expected \(Self.show(pointer)) to be \(Self.text(expected, scrub)), found \(Self.text(found, scrub))"
            }
        }
        return nil
    }

    /// Whether `found`, a number, boolean or null, is written as `expected`'s text.
    private static func sameText(_ found: JSONNode, _ expected: JSONNode) -> Bool {
        guard case .string(let text) = expected.value else { return false }
        switch found.value {
        case .number(let number): return Double(text) == number
        case .bool(let flag): return text == String(flag)
        case .null: return text == "null"
        default: return false
        }
    }

    private static func show(_ pointer: String) -> String { pointer.isEmpty ? "the body" : pointer }

    /// A value as JSON text, for messages: secrets scrubbed, then long values shortened.
    static func text(_ node: JSONNode, _ scrub: (String) -> String = { $0 }) -> String {
        shortened(scrub(node.compactText))
    }

    private static func shortened(_ text: String) -> String {
        text.count > 120 ? String(text.prefix(117)) + "…" : text
    }

    private static func number(_ value: Double) -> String { WholeNumberText.of(value) }
}
