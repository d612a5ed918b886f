import Courier
import Foundation

/// The one place that knows a run's secrets and scrubs them from everything that leaves the
/// process: log lines, error messages, the dry-run plan.
public struct Redactor: Sendable {
    public static let placeholder = "<redacted>"
    /// Header names whose values are always secret, beyond `HTTPRequest.isSecretHeader`.
    static let secretHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
        "x-auth-token",
    ]

    /// Longest first, so a secret that contains another is replaced whole.
    private let values: [String]

    public init(secrets: Set<String>) {
        values = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// The text with every secret value replaced (also in percent-encoded form, as it appears
    /// in URLs).
    public func scrub(_ text: String) -> String {
        guard !values.isEmpty else { return text }
        var result = text
        for value in values {
            result = result.replacingOccurrences(of: value, with: Self.placeholder)
            let encoded = URLBuilder.percentEncode(value)
            if encoded != value {
                result = result.replacingOccurrences(of: encoded, with: Self.placeholder)
            }
        }
        return result
    }

    /// Whether a header's value must never be written.
    public func isSecretHeader(_ name: String, in request: HTTPRequest?) -> Bool {
        Self.secretHeaderNames.contains(name.lowercased()) || request?.isSecretHeader(name) == true
    }

    /// Header fields as log values: secret ones as `<redacted>`, the rest scrubbed.
    func headers(_ headers: HTTPHeaders, of request: HTTPRequest?) -> JSONWriter.Value {
        .object(
            headers.map { field in
                (
                    field.name,
                    .string(
                        isSecretHeader(field.name, in: request)
                            ? Self.placeholder : scrub(field.value))
                )
            })
    }
}
