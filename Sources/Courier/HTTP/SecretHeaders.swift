/// The one place that decides which header fields carry secrets.
///
/// A secret header's value is dropped on a cross-origin redirect, redacted in descriptions and
/// logs, and never printed. Some names are secret in every request; a request can mark more
/// (``HTTPRequest/secretHeaderNames``), as `.header` authentication does.
public enum SecretHeaders {
    /// Lowercased names that are secret in every request and response.
    public static let alwaysSecret: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
        "x-auth-token",
    ]

    /// A bit per length (in bytes) that a name in ``alwaysSecret`` has.
    private static let secretLengths: UInt64 = alwaysSecret.reduce(0) { mask, name in
        mask | (1 << UInt64(name.utf8.count))
    }

    /// The text that stands in for a secret value.
    public static let placeholder = "<redacted>"

    /// Whether `name` is secret, given the names a request marked (lowercased).
    public static func isSecret(_ name: String, marked: Set<String> = []) -> Bool {
        if marked.isEmpty {
            // Asked for every header of every logged request: most names have no secret name's
            // length, and the rest are compared without lowercasing.
            let count = name.utf8.count
            guard count < 64, secretLengths & (1 << count) != 0 else { return false }
            return alwaysSecret.contains { $0.utf8.count == count && equalIgnoringCase($0, name) }
        }
        let lowered = name.lowercased()
        return alwaysSecret.contains(lowered) || marked.contains(lowered)
    }

    /// ASCII case-insensitive equality, `lowercase` being already lowercased.
    private static func equalIgnoringCase(_ lowercase: String, _ other: String) -> Bool {
        zip(lowercase.utf8, other.utf8).allSatisfy { a, b in
            a == b || (b >= 0x41 && b <= 0x5A && a == b | 0x20)
        }
    }

    /// The headers with every secret value replaced by ``placeholder``.
    public static func redacting(_ headers: HTTPHeaders, marked: Set<String> = []) -> HTTPHeaders {
        HTTPHeaders(
            headers.map { field in
                isSecret(field.name, marked: marked)
                    ? HTTPHeaders.Field(name: field.name, value: placeholder) : field
            })
    }
}
