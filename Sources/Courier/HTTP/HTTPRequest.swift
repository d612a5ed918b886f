import Foundation

/// One HTTP request, as handed to an ``HTTPClient``.
///
/// ```swift
/// var request = HTTPRequest(url: URL(string: "http://127.0.0.1:8080/items")!, method: .post)
/// request.headers["Content-Type"] = "application/json"
/// request.body = Data(#"{"name":"x"}"#.utf8)
/// ```
public struct HTTPRequest: Sendable, Hashable {
    /// The absolute `http` or `https` URL.
    public var url: URL
    public var method: HTTPMethod
    public var headers: HTTPHeaders
    /// The body bytes; `nil` sends none.
    public var body: Data?
    /// The whole-request deadline in seconds; `nil` leaves it to the transport's default.
    public var timeout: TimeInterval?
    /// Whether the server's TLS certificate and host name are checked. Leave it on outside tests.
    public var validatesTLS: Bool
    /// Lowercased names of headers that carry secrets beyond the ones every layer knows
    /// (see ``HTTPRequest/alwaysSecretHeaderNames``): they are dropped on a cross-origin
    /// redirect and redacted in logs.
    public var secretHeaderNames: Set<String>

    /// Header names that are secret in every request.
    public static let alwaysSecretHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie",
    ]

    public init(
        url: URL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        timeout: TimeInterval? = nil,
        validatesTLS: Bool = true,
        secretHeaderNames: Set<String> = []
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.validatesTLS = validatesTLS
        self.secretHeaderNames = Set(secretHeaderNames.map { $0.lowercased() })
    }

    /// Whether the named header is secret in this request.
    public func isSecretHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return Self.alwaysSecretHeaderNames.contains(lowered) || secretHeaderNames.contains(lowered)
    }
}
