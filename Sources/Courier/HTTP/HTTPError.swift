import Foundation

/// A transport failure: no HTTP response could be had for a request.
///
/// ```swift
/// do { _ = try await client.perform(request) } catch let error as HTTPError where error.kind == .timeout {
///     // retry later
/// }
/// ```
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What class of failure this is. An open set: new kinds break no `switch`.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The URL is malformed or its scheme is not http/https.
        public static let invalidURL = Kind(rawValue: "invalidURL")
        /// A header or the method cannot be sent as it is (CR/LF in a value, a bad name).
        public static let invalidRequest = Kind(rawValue: "invalidRequest")
        /// The host name could not be resolved.
        public static let dns = Kind(rawValue: "dns")
        /// No connection could be made (refused, unreachable).
        public static let connect = Kind(rawValue: "connect")
        /// The TLS handshake or certificate check failed.
        public static let tls = Kind(rawValue: "tls")
        /// The request's deadline passed.
        public static let timeout = Kind(rawValue: "timeout")
        /// The redirect chain was too long or went round in a loop.
        public static let tooManyRedirects = Kind(rawValue: "tooManyRedirects")
        /// The response body passed the configured size cap.
        public static let bodyTooLarge = Kind(rawValue: "bodyTooLarge")
        /// The response body could not be written to its file (no space, no permission).
        public static let file = Kind(rawValue: "file")
        /// The transport cannot do what the request asks (a TLS option URLSession on Linux
        /// lacks); nothing was sent.
        public static let unsupported = Kind(rawValue: "unsupported")
        /// A host's gate (``HostThrottlingHTTPClient``) would have held the request longer
        /// than it may wait: the host asked for a longer pause, its quota is spent until a
        /// later reset, or its pace after 429s puts the request too far back. Nothing was sent.
        public static let throttled = Kind(rawValue: "throttled")
        /// The calling task was cancelled or the client shut down.
        public static let cancelled = Kind(rawValue: "cancelled")
        /// Any other network failure: reset, closed early, truncated body, protocol error.
        public static let network = Kind(rawValue: "network")
        /// The server's reply is not an HTTP response: a malformed status line (`HTTP/1.1 20
        /// OK`, a 22-digit or non-numeric code), an HTTP/0.9 reply with no status line, or a
        /// header block over 64 KiB, which both transports refuse rather than parse
        /// (docs/transports.md, "Header blocks"). Retried like a network failure (a proxy or a
        /// server mid-restart may send one).
        public static let badResponse = Kind(rawValue: "badResponse")

        public var description: String { rawValue }
    }

    public var kind: Kind
    /// What went wrong, in words; never contains header values or credentials.
    public var message: String
    /// The URL of the failing request, with any user name and password removed.
    public var url: URL?
    /// The transport's own code (a `CURLcode`, a `URLError.Code` raw value), when there is one.
    public var underlyingCode: Int?
    /// The status of the response the failure came with, when one came: a redirect that was
    /// not followed (a loop, too many hops, an unusable `Location`, a secret body bound for
    /// another origin) has its 3xx here. `nil` when no response came.
    public var status: Int?

    /// What both transports say when libcurl gives up on a response header section (a line
    /// over its 100 KiB limit): curl's own text, "Out of memory", names the wrong cause.
    package static let oversizedHeadersMessage =
        "the response headers are too large for libcurl (a header line over 100 KiB), or memory ran out"

    public init(_ kind: Kind, _ message: String, url: URL? = nil, underlyingCode: Int? = nil) {
        self.kind = kind
        self.message = message
        self.url = url.map(Self.withoutCredentials)
        self.underlyingCode = underlyingCode
    }

    public var description: String {
        var text = "\(kind): \(message)"
        if let url { text += " (\(url.absoluteString))" }
        if let underlyingCode { text += " [code \(underlyingCode)]" }
        return text
    }

    /// The URL with user and password removed, so it can be shown in messages.
    public static func withoutCredentials(_ url: URL) -> URL {
        guard url.mayCarryUserinfo,
            url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }
}

extension HTTPError: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
