import Foundation

/// What goes on the wire for an ``HTTPRequest``: the one definition both transports send from,
/// so that they send the same bytes, and that the job log shows.
///
/// On top of the caller's headers a transport adds `Host` and `Content-Length`, and these,
/// each only when the caller did not set it:
/// - `User-Agent: courier/<version>`
/// - `Accept: */*`
/// - `Accept-Encoding: gzip, deflate, br, zstd` (the codings both transports decode, as
///   curl(1) offers them; the response body comes back decoded; see `docs/transports.md`)
/// - `Authorization: Basic …` when the URL carries `user:password@` (the URL is sent without it)
///
/// Nothing else: no `Accept-Language`, `Connection`, `Expect`, or form `Content-Type`.
public struct WireRequest: Sendable, Hashable {
    /// The URL as requested, without user name or password.
    public var url: URL
    /// Every header field the transport sends, in order, besides `Host` and `Content-Length`.
    public var headers: HTTPHeaders

    public static let userAgent = "courier/\(CourierVersion.current)"
    public static let accept = "*/*"
    /// The codings offered when the caller set no `Accept-Encoding`: those both transports
    /// decode (`CurlHTTPClient` itself, checking each stream's end; URLSession through
    /// FoundationNetworking's libcurl).
    public static let acceptEncoding = "gzip, deflate, br, zstd"

    /// Checks the request and works out what is sent.
    ///
    /// `acceptEncoding` is the `Accept-Encoding` sent when the caller set none: a transport
    /// that decodes other codings than ``acceptEncoding`` offers its own
    /// (``URLSessionHTTPClient`` on Darwin offers `gzip, deflate, br`, what Apple's URLSession
    /// offers itself). A caller's `Accept-Encoding` is sent as given, whatever it names; the
    /// body is decoded all the same.
    ///
    /// Throws ``HTTPError`` with `.invalidURL` for a URL that is not absolute http(s) or names
    /// a port outside 1–65535, and
    /// `.invalidRequest` for a method or header name that is not a token, a header value with
    /// CR, LF or NUL (which would let a value inject another header), a GET or HEAD with a
    /// body, or a `Content-Length` that is not the body's size.
    public init(_ request: HTTPRequest, acceptEncoding: String = Self.acceptEncoding)
        throws(HTTPError)
    {
        // The URL as errors show it, worked out only for an error: it parses the URL again.
        func failure(_ kind: HTTPError.Kind, _ message: String) -> HTTPError {
            HTTPError(kind, message, url: request.displayURL)
        }
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = request.url.host, !host.isEmpty
        else {
            throw failure(.invalidURL, "only absolute http and https URLs")
        }
        guard Origin.hasValidPort(request.url) else {
            throw failure(.invalidURL, "the port is not from 1 to 65535")
        }
        guard request.body == nil || request.streamedBody == nil else {
            throw failure(
                .invalidRequest, "the request sets both body and streamedBody; give one of them")
        }
        // URLSession refuses a GET with a body (and curl would send one): both refuse it, so
        // that the transports agree. An empty body is no body.
        if request.method == .get || request.method == .head,
            request.streamedBody != nil || request.body?.isEmpty == false
        {
            throw failure(
                .invalidRequest,
                "a \(request.method) request cannot carry a body; send it with POST, PUT or PATCH")
        }
        guard request.method.isValidToken else {
            throw failure(.invalidRequest, "the method is not a valid token")
        }
        for field in request.headers {
            guard Self.isToken(field.name) else {
                throw failure(.invalidRequest, "header name \"\(field.name)\" is not a valid token")
            }
            guard Self.isFieldValue(field.value) else {
                throw failure(
                    .invalidRequest, "the value of header \(field.name) contains CR, LF or NUL")
            }
        }
        if request.streamedBody == nil, let problem = Self.contentLengthProblem(request) {
            throw failure(.invalidRequest, problem)
        }
        var headers = request.headers
        // The defaults below, and Authorization: one allocation for the lot.
        headers.reserveCapacity(headers.count + 4)
        if let credentials = Self.basicCredentials(in: request.url) {
            if !headers.contains("Authorization") {
                headers.add("Authorization", "Basic \(credentials)")
            }
            url = HTTPError.withoutCredentials(request.url)
        } else {
            url = request.url
        }
        if !headers.contains("User-Agent") { headers.add("User-Agent", Self.userAgent) }
        if !headers.contains("Accept") { headers.add("Accept", Self.accept) }
        if !headers.contains("Accept-Encoding") {
            headers.add("Accept-Encoding", acceptEncoding)
        }
        self.headers = headers
    }

    /// Why a `Content-Length` the caller set cannot be sent: it is not the body's size. The
    /// transports send the whole body after it, so bytes past a shorter length were read by
    /// the server as the next request on the connection, and every answer after went to the
    /// wrong request; a longer one left the server waiting (trial KKK, both transports).
    /// `nil` when none is set, or each says the body's size.
    static func contentLengthProblem(_ request: HTTPRequest) -> String? {
        // Most requests set none: one case-insensitive lookup, no string made per header.
        guard request.headers.contains("Content-Length") else { return nil }
        let size = request.body?.count ?? 0
        for field in request.headers where field.name.lowercased() == "content-length" {
            let value = field.value.trimmingCharacters(in: .whitespaces)
            guard value != String(size) else { continue }
            return
                "Content-Length \"\(value)\" is not the body's size (\(size) bytes); leave it out, the transport sends the right one"
        }
        return nil
    }

    /// RFC 9110 `token`: the characters a header name may have.
    public static func isToken(_ text: String) -> Bool {
        HTTPMethod(rawValue: text).isValidToken
    }

    /// Whether a header value can be sent as it is: no CR, LF or NUL.
    public static func isFieldValue(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// `base64(user:password)` from the URL's userinfo, percent-decoded, or `nil` when it has none.
    static func basicCredentials(in url: URL) -> String? {
        guard url.mayCarryUserinfo,
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.percentEncodedUser != nil || components.percentEncodedPassword != nil
        else { return nil }
        let user = components.user ?? ""
        let password = components.password ?? ""
        return Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
