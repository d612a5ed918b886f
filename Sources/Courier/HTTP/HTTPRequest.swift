import Foundation

/// One HTTP request, as handed to an ``HTTPClient``.
///
/// ```swift
/// var request = HTTPRequest(url: URL(string: "http://127.0.0.1:8080/items")!, method: .post)
/// request.headers["Content-Type"] = "application/json"
/// request.body = Data(#"{"name":"x"}"#.utf8)
/// ```
/// Its `description` redacts secret headers, secret query items and URL credentials.
public struct HTTPRequest: Sendable, Hashable, CustomStringConvertible {
    /// The absolute `http` or `https` URL.
    public var url: URL
    public var method: HTTPMethod
    public var headers: HTTPHeaders {
        // The names marked secret go with the headers, so that printed alone they redact them.
        // A request with no marks (most: every job request) writes nothing on this hot path.
        didSet {
            if !markedSecretHeaders.isEmpty || !headers.markedSecret.isEmpty {
                headers.markedSecret = markedSecretHeaders
            }
        }
    }
    /// The body bytes, sent exactly as they are; `nil` sends none.
    public var body: Data?
    /// A body read from files and bytes as it is sent (uploads, multipart forms), instead of
    /// ``body``; setting both is refused with `.invalidRequest`.
    public var streamedBody: StreamedBody?
    /// The whole-request deadline in seconds; `nil` leaves it to the transport's default.
    public var timeout: TimeInterval?
    /// Whether the server's TLS certificate and host name are checked. Leave it on outside tests.
    public var validatesTLS: Bool
    /// A custom CA bundle, a client certificate, public-key pins, a minimum version.
    public var tls = TLSOptions()
    /// Where the response body goes: memory (the default) or a file, written as it arrives.
    public var bodyDestination: ResponseBodyDestination = .memory
    /// Told how many body bytes have gone out and come in, as they do (see
    /// ``ProgressHandler`` for the thread it runs on).
    public var progress: ProgressHandler?
    private var markedSecretHeaders: Set<String>
    /// Names of query items whose values are secret (an API key sent as `?api_key=…`): they are
    /// redacted in ``displayURL`` and so in every error and log.
    public var secretQueryNames: Set<String>
    /// Whether the body holds a secret (a password in a login form, say): a 307 or 308 redirect
    /// to another origin, which would send the body there again, is then refused with
    /// `.invalidRequest` instead of followed.
    public var bodyIsSecret = false
    /// Whether the caller set the request's `Authorization` itself, over an API client's
    /// configured credentials: a token middleware (``AuthenticatingHTTPClient``) then leaves
    /// it as it is, as the other forms of configured auth do (``DefaultAPIClient``).
    package var authorizationIsCallers = false

    /// Header names that carry secrets beyond ``SecretHeaders/alwaysSecret``: they are dropped
    /// on a cross-origin redirect and redacted in logs. Stored lowercased, however they are
    /// inserted.
    public var secretHeaderNames: Set<String> {
        get { markedSecretHeaders }
        set {
            markedSecretHeaders = Set(newValue.map { $0.lowercased() })
            headers.markedSecret = markedSecretHeaders
        }
    }

    public init(
        url: URL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        timeout: TimeInterval? = nil,
        validatesTLS: Bool = true,
        secretHeaderNames: Set<String> = [],
        secretQueryNames: Set<String> = []
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.validatesTLS = validatesTLS
        self.markedSecretHeaders = Set(secretHeaderNames.map { $0.lowercased() })
        self.secretQueryNames = secretQueryNames
        self.headers.markedSecret = markedSecretHeaders
    }

    /// Whether sending the request twice is safe (RFC 9110 §9.2.2): an idempotent method, or
    /// an `Idempotency-Key` header that lets the server recognise the repeat. The retry policy
    /// and the curl transport's connection reuse both follow it.
    public var isRepeatable: Bool {
        method.isIdempotent || headers.contains("Idempotency-Key")
    }

    /// Whether the named header is secret in this request.
    public func isSecretHeader(_ name: String) -> Bool {
        SecretHeaders.isSecret(name, marked: markedSecretHeaders)
    }

    /// Removes the headers secret in this request, for another origin.
    mutating func removeSecretHeaders() {
        headers.removeSecrets(marked: markedSecretHeaders)
    }

    /// The URL fit to show: no user name or password, and every secret query value replaced.
    public var displayURL: URL { RequestSecrets(of: self).display(url) }

    /// The headers with secret values replaced by `<redacted>`.
    public var redactedHeaders: HTTPHeaders {
        SecretHeaders.redacting(headers, marked: markedSecretHeaders)
    }

    public var description: String {
        var text = "\(method) \(displayURL.absoluteString)"
        for field in redactedHeaders { text += "\n\(field.name): \(field.value)" }
        if let body { text += "\n(\(body.count) bytes of body)" }
        if let streamedBody { text += "\n(\(streamedBody.summary))" }
        return text
    }
}
