import Courier

/// A string with `{variable}` references to `foreach` variables.
///
/// A reference is `{` + an identifier (letters, digits, `_`, not starting with a digit) + `}`;
/// `{{` is a literal `{` and the `}}` that closes it a literal `}`; any other brace is literal
/// text. `{+variable}` is a raw reference (RFC 6570's reserved
/// expansion): in a `path`, its value is not encoded as one segment (``renderPath(_:)``).
struct Template: Sendable, Hashable {
    enum Part: Sendable, Hashable {
        case text(String)
        case variable(String)
        /// `{+name}`: the value stands in a path as it is, slashes and all.
        case raw(String)
    }

    let parts: [Part]

    /// What an environment value's `{` becomes in a template's source (a private-use scalar):
    /// it parses as text, and is `{` again in the parts. Environment values are data: one
    /// holding `{id}` must be sent as it is, not rendered.
    static let environmentBrace = "\u{E000}"

    /// Parses on UTF-8 bytes: every task of a run renders its templates, and walking
    /// `Character`s showed in profiles. Braces and identifiers are ASCII, so byte offsets
    /// always fall on character boundaries.
    init(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "{")) else {
            parts = text.isEmpty ? [] : [.text(Self.restoringBraces(text))]
            return
        }
        var parts: [Part] = []
        var literalStart = 0
        var index = 0
        // `{{` writes `{`, and the `}}` that closes it writes `}`: `{{name}}` is the text
        // `{name}` (a GraphQL selection, say). A `}}` with no `{{` open is text as it is, so
        // JSON text in a `body` (`{"a": {"b": 1}}`) reads as before; `{{` is never valid JSON.
        var openEscapes = 0
        func escape(_ brace: String) {
            if literalStart < index {
                parts.append(.text(String(decoding: bytes[literalStart..<index], as: UTF8.self)))
            }
            parts.append(.text(brace))
            index += 2
            literalStart = index
        }
        while index < bytes.count {
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            if bytes[index] == UInt8(ascii: "{"), next == UInt8(ascii: "{") {
                escape("{")
                openEscapes += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}"), next == UInt8(ascii: "}"), openEscapes > 0 {
                escape("}")
                openEscapes -= 1
                continue
            }
            if bytes[index] == UInt8(ascii: "{"),
                let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "}"))
            {
                let isRaw = index + 1 < close && bytes[index + 1] == UInt8(ascii: "+")
                let nameStart = isRaw ? index + 2 : index + 1
                guard Self.isIdentifier(bytes[nameStart..<close]) else {
                    index += 1
                    continue
                }
                if literalStart < index {
                    parts.append(
                        .text(String(decoding: bytes[literalStart..<index], as: UTF8.self)))
                }
                let name = String(decoding: bytes[nameStart..<close], as: UTF8.self)
                parts.append(isRaw ? .raw(name) : .variable(name))
                index = close + 1
                literalStart = index
                continue
            }
            index += 1
        }
        if literalStart < bytes.count {
            parts.append(.text(String(decoding: bytes[literalStart...], as: UTF8.self)))
        }
        // Adjacent texts (around an escape) as one part.
        var merged: [Part] = []
        for part in parts {
            if case .text(let text) = part, case .text(let before)? = merged.last {
                merged[merged.count - 1] = .text(before + text)
            } else {
                merged.append(part)
            }
        }
        self.parts = merged.map {
            if case .text(let text) = $0 { .text(Self.restoringBraces(text)) } else { $0 }
        }
    }

    /// `text` with environment braces back as `{`. (U+E000 is EE 80 80 in UTF-8: the first
    /// byte never occurs in ASCII text, so the common case costs one byte scan.)
    static func restoringBraces(_ text: String) -> String {
        guard text.utf8.contains(0xEE) else { return text }
        return text.replacingOccurrences(of: environmentBrace, with: "{")
    }

    /// An ASCII letter or `_`, then ASCII letters, digits or `_`.
    static func isIdentifier(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isLetter(first) || first == UInt8(ascii: "_") else {
            return false
        }
        return bytes.allSatisfy {
            isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_")
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether the template is one `{variable}` and nothing else.
    var isOneVariable: Bool {
        if parts.count == 1, case .variable = parts[0] { true } else { false }
    }

    /// The variables referenced, in order.
    var variables: [String] {
        parts.compactMap {
            switch $0 {
            case .variable(let name), .raw(let name): name
            case .text: nil
            }
        }
    }

    /// How many UTF-8 bytes ``render(_:)`` would give, without building the string (a
    /// native string knows its UTF-8 length at once).
    func renderedByteCount(_ bindings: [String: String]) -> Int {
        var count = 0
        for part in parts {
            switch part {
            case .text(let text): count += text.utf8.count
            case .variable(let name): count += bindings[name]?.utf8.count ?? name.utf8.count + 2
            case .raw(let name): count += bindings[name]?.utf8.count ?? name.utf8.count + 3
            }
        }
        return count
    }

    /// The text with variables replaced; unknown ones stay as written.
    func render(_ bindings: [String: String]) -> String {
        var output = ""
        for part in parts {
            switch part {
            case .text(let text): output += text
            case .variable(let name): output += bindings[name] ?? "{\(name)}"
            case .raw(let name): output += bindings[name] ?? "{+\(name)}"
            }
        }
        return output
    }

    /// Why a value cannot stand where a path template puts it.
    struct PathValueError: Error {
        let variable: String
        let value: String
    }

    /// The text with variables replaced as a `path` takes them: before the template's first
    /// literal `?`, each value is one path segment (everything but RFC 3986's unreserved
    /// characters percent-encoded, so `/`, `?`, `#` and `%` in a value cannot climb or end
    /// the path); after it, a query component (`&`, `=`, `+` encoded too). A value that would
    /// be a whole `.` or `..` segment is refused: servers decode `%2E%2E` and then climb.
    /// `{+name}` puts the value in as it is, for the rare job whose values are paths.
    func renderPath(_ bindings: [String: String]) -> Result<String, PathValueError> {
        var output = ""
        var inQuery = false
        for (index, part) in parts.enumerated() {
            switch part {
            case .text(let text):
                output += text
                if text.utf8.contains(UInt8(ascii: "?")) { inQuery = true }
            case .raw(let name):
                output += bindings[name] ?? "{+\(name)}"
            case .variable(let name):
                guard let value = bindings[name] else {
                    output += "{\(name)}"
                    continue
                }
                if !inQuery, value == "." || value == "..", wholeSegment(at: index, in: output) {
                    return .failure(PathValueError(variable: name, value: value))
                }
                output += URLBuilder.percentEncode(value)
            }
        }
        return .success(output)
    }

    /// Whether the variable at `index` fills a whole path segment: a `/` (or nothing) before
    /// it, and a `/`, `?`, `#` (or nothing) after it.
    private func wholeSegment(at index: Int, in rendered: String) -> Bool {
        let before = rendered.isEmpty || rendered.hasSuffix("/")
        guard index + 1 < parts.count else { return before }
        if case .text(let next) = parts[index + 1] {
            return before && (next.hasPrefix("/") || next.hasPrefix("?") || next.hasPrefix("#"))
        }
        return false
    }
}
