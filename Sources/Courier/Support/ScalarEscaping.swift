/// Text escaped scalar by scalar for a format: each scalar kept, replaced or dropped by the
/// format's rule. The multipart field names' percent escapes, Prometheus label values, JUnit's
/// XML attributes and the manual page's groff text are each one rule over this walk.
package enum ScalarEscaping {
    /// What a format does with one scalar.
    package enum Action {
        case keep
        case replace(String)
        case drop
    }

    /// `text` with each scalar as `rule` says.
    package static func escape(_ text: String, _ rule: (Unicode.Scalar) -> Action) -> String {
        var escaped = ""
        escaped.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch rule(scalar) {
            case .keep: escaped.unicodeScalars.append(scalar)
            case .replace(let replacement): escaped += replacement
            case .drop: break
            }
        }
        return escaped
    }
}
