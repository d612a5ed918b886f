import Foundation

/// A complete HTTP response: every status is a response, only transport failures throw.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, for example 200 or 404.
    public var status: Int
    /// The header fields of the final response, repeated fields kept.
    public var headers: HTTPHeaders
    /// The body, when it came to memory; empty when it went to a file (``savedBody``).
    public var body: Data
    /// The URL this response came from: after redirects, the last one.
    public var url: URL
    /// How many redirects were followed to get here (0 when none were).
    public var redirectCount: Int
    /// What the transport measured of the exchange.
    public var timings: HTTPTimings
    /// The header fields the transport put on the wire for the request the caller made, its
    /// defaults and what middleware below the caller added (cookies) included. After redirects,
    /// those of the first hop, which is the request the caller made.
    public var requestHeaders: HTTPHeaders
    /// Where the body went when the request asked for a file
    /// (``HTTPRequest/bodyDestination``); `nil` when it is in ``body``.
    public var savedBody: SavedBody?
    /// The content coding of a body whose end the transport could not check, or `nil` when
    /// there was nothing left unchecked (a body not compressed, or one whose compressed stream
    /// was checked to its end). ``URLSessionHTTPClient`` sets it for every compressed body:
    /// FoundationNetworking decodes it and never tells whether the stream ended, so a body cut
    /// inside its compressed stream (in whole HTTP framing) cannot be told from a whole one.
    /// `CurlHTTPClient` checks each coding it decodes and fails a cut stream, so never sets
    /// it. `courier run` writes it as the request line's `bodyEndUnchecked` (docs/log-format.md).
    public var bodyEndUnchecked: String?
    /// The secrets its request marked, so that ``description`` and `dump` redact them in
    /// ``url`` and ``requestHeaders`` as the request's own description does. Set by the
    /// transports (and ``StubHTTPClient``-like doubles through ``redacting(secretsOf:)``).
    package var secrets = RequestSecrets() {
        // Printed alone, the request's headers redact what it marked secret.
        didSet { requestHeaders.markedSecret = secrets.headerNames }
    }

    public init(
        status: Int,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        url: URL,
        redirectCount: Int = 0,
        timings: HTTPTimings = HTTPTimings(),
        requestHeaders: HTTPHeaders = [:],
        savedBody: SavedBody? = nil,
        bodyEndUnchecked: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.redirectCount = redirectCount
        self.timings = timings
        self.requestHeaders = requestHeaders
        self.savedBody = savedBody
        self.bodyEndUnchecked = bodyEndUnchecked
    }

    /// The body's length in bytes, in memory or in its file.
    public var bodyCount: Int { savedBody?.byteCount ?? body.count }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Whether the status is one of the redirects a client follows (301, 302, 303, 307, 308).
    public var isRedirect: Bool { Self.redirectStatuses.contains(status) }

    /// The statuses a redirect is followed on.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
}

/// Phases of one exchange, each in seconds from the start of the request, where the transport
/// can measure it (`nil` where it cannot).
public struct HTTPTimings: Sendable, Hashable {
    /// Name resolution finished.
    public var dns: TimeInterval?
    /// TCP connection established.
    public var connect: TimeInterval?
    /// TLS handshake finished (`nil` for plain http).
    public var tls: TimeInterval?
    /// First response byte arrived.
    public var firstByte: TimeInterval?
    /// The whole exchange.
    public var total: TimeInterval
    /// Whether the exchange opened a new connection rather than reusing a kept-alive one (`nil`
    /// where the transport cannot tell: URLSession on Linux).
    public var newConnection: Bool?

    public init(
        dns: TimeInterval? = nil,
        connect: TimeInterval? = nil,
        tls: TimeInterval? = nil,
        firstByte: TimeInterval? = nil,
        total: TimeInterval = 0,
        newConnection: Bool? = nil
    ) {
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.total = total
        self.newConnection = newConnection
    }
}
