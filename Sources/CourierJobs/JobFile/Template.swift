/// A string with `{variable}` references to `foreach` variables.
///
/// A reference is `{` + an identifier (letters, digits, `_`, not starting with a digit) + `}`;
/// any other brace is literal text.
struct Template: Sendable, Hashable {
    enum Part: Sendable, Hashable {
        case text(String)
        case variable(String)
    }

    let parts: [Part]

    init(_ text: String) {
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "{", let close = text[index...].firstIndex(of: "}") {
                let name = text[text.index(after: index)..<close]
                if Self.isIdentifier(name) {
                    if !literal.isEmpty { parts.append(.text(literal)) }
                    literal = ""
                    parts.append(.variable(String(name)))
                    index = text.index(after: close)
                    continue
                }
            }
            literal.append(text[index])
            index = text.index(after: index)
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        self.parts = parts
    }

    /// The variables referenced, in order.
    var variables: [String] {
        parts.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// The text with variables replaced; unknown ones stay as written.
    func render(_ bindings: [String: String]) -> String {
        var output = ""
        for part in parts {
            switch part {
            case .text(let text): output += text
            case .variable(let name): output += bindings[name] ?? "{\(name)}"
            }
        }
        return output
    }

    static func isIdentifier(_ text: Substring) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
    }
}
