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

    /// Parses on UTF-8 bytes: every task of a run renders its templates, and walking
    /// `Character`s showed in profiles. Braces and identifiers are ASCII, so byte offsets
    /// always fall on character boundaries.
    init(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "{")) else {
            parts = text.isEmpty ? [] : [.text(text)]
            return
        }
        var parts: [Part] = []
        var literalStart = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "{"),
                let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "}")),
                Self.isIdentifier(bytes[(index + 1)..<close])
            {
                if literalStart < index {
                    parts.append(
                        .text(String(decoding: bytes[literalStart..<index], as: UTF8.self)))
                }
                parts.append(.variable(String(decoding: bytes[(index + 1)..<close], as: UTF8.self)))
                index = close + 1
                literalStart = index
                continue
            }
            index += 1
        }
        if literalStart < bytes.count {
            parts.append(.text(String(decoding: bytes[literalStart...], as: UTF8.self)))
        }
        self.parts = parts
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

    /// The variables referenced, in order.
    var variables: [String] {
        parts.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// How many UTF-8 bytes ``render(_:)`` would give, without building the string (a
    /// native string knows its UTF-8 length at once).
    func renderedByteCount(_ bindings: [String: String]) -> Int {
        var count = 0
        for part in parts {
            switch part {
            case .text(let text): count += text.utf8.count
            case .variable(let name): count += bindings[name]?.utf8.count ?? name.utf8.count + 2
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
            }
        }
        return output
    }
}
