import Foundation

/// An OAuth 2.0 client of a token endpoint (RFC 6749): where it asks for access tokens, with
/// which grant, and how it proves who it is. ``OAuth2TokenProvider`` sends the requests.
///
/// ```swift
/// let reports = OAuth2Configuration(
///     tokenURL: URL(string: "https://auth.example.com/oauth/token")!,
///     grant: .clientCredentials, clientID: "reports", clientSecret: secret,
///     scope: "read:reports")
/// ```
/// The description names the endpoint, grant and client, never the secret or refresh token.
public struct OAuth2Configuration: Sendable, Hashable, CustomStringConvertible {
    /// How the client obtains its tokens.
    public enum Grant: Sendable, Hashable {
        /// `grant_type=client_credentials` (RFC 6749 §4.4): the client acts on its own behalf,
        /// and needs a ``OAuth2Configuration/clientSecret``.
        case clientCredentials
        /// `grant_type=refresh_token` (§6) with this refresh token. A new refresh token in a
        /// response replaces it for every later request of the same provider (rotation).
        case refreshToken(String)

        /// The `grant_type` value.
        public var name: String {
            switch self {
            case .clientCredentials: "client_credentials"
            case .refreshToken: "refresh_token"
            }
        }
    }

    /// Where the client's id and secret go in a token request (RFC 6749 §2.3.1).
    public enum ClientAuthentication: String, Sendable, Hashable, CaseIterable {
        /// `Authorization: Basic` of the form-encoded id and secret: what every server must
        /// accept, and the default.
        case basic
        /// `client_id` and `client_secret` as fields of the form body, for servers that want
        /// them there.
        case body
    }

    /// The token endpoint. Its query, if any, is kept (§3.2).
    public var tokenURL: URL
    public var grant: Grant
    /// The client identifier (`client_id`).
    public var clientID: String
    /// The client secret; `nil` for a public client, which sends `client_id` in the body.
    public var clientSecret: String?
    /// The scopes asked for, space-separated (`scope`); `nil` for the server's default.
    public var scope: String?
    public var clientAuthentication: ClientAuthentication

    public init(
        tokenURL: URL, grant: Grant, clientID: String, clientSecret: String? = nil,
        scope: String? = nil, clientAuthentication: ClientAuthentication = .basic
    ) {
        self.tokenURL = tokenURL
        self.grant = grant
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.clientAuthentication = clientAuthentication
    }

    public var description: String {
        "OAuth2 \(grant.name) for \(clientID) at \(HTTPError.withoutCredentials(tokenURL).absoluteString)"
    }

    /// The token request: a `POST` of an `application/x-www-form-urlencoded` body to
    /// ``tokenURL``, with the client's credentials where ``clientAuthentication`` says. The
    /// `Authorization` header and the body are marked secret, so that a redirect to another
    /// origin drops the one and refuses to carry the other, and logs redact them.
    /// - Parameter refreshToken: for the refresh-token grant, the refresh token to present
    ///   (the latest one issued); the grant's own when `nil`.
    public func tokenRequest(refreshToken: String? = nil) -> HTTPRequest {
        var fields = [("grant_type", grant.name)]
        if case .refreshToken(let initial) = grant {
            fields.append(("refresh_token", refreshToken ?? initial))
        }
        if let scope { fields.append(("scope", scope)) }
        var headers: HTTPHeaders = [
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
        ]
        if let clientSecret, clientAuthentication == .basic {
            headers.replaceOrAdd(
                "Authorization", "Basic " + Self.basicCredential(clientID, clientSecret))
        } else {
            // A public client names itself in the body (§3.2.1); so does `body` authentication.
            fields.append(("client_id", clientID))
            if let clientSecret { fields.append(("client_secret", clientSecret)) }
        }
        let body = fields.map { "\(Self.formEncoded($0.0))=\(Self.formEncoded($0.1))" }
            .joined(separator: "&")
        var request = HTTPRequest(
            url: tokenURL, method: .post, headers: headers, body: Data(body.utf8))
        request.secretHeaderNames.insert("authorization")
        request.bodyIsSecret = true
        return request
    }

    /// `base64(id:secret)` with both parts form-encoded first, as RFC 6749 §2.3.1 has it (an id
    /// or secret holding `:` stays unambiguous).
    public static func basicCredential(_ clientID: String, _ clientSecret: String) -> String {
        Data("\(formEncoded(clientID)):\(formEncoded(clientSecret))".utf8).base64EncodedString()
    }

    /// `application/x-www-form-urlencoded` (RFC 6749 Appendix B): every byte but the
    /// unreserved ones as `%XX`.
    static func formEncoded(_ text: String) -> String { PercentEncoding.unreserved(text) }

    /// The token in a token endpoint's response, or why there is none (RFC 6749 §5.1, §5.2).
    public func token(from response: HTTPResponse) -> Result<OAuth2Token, OAuth2Error> {
        func failure(_ problem: OAuth2Error.Problem, code: String? = nil, detail: String? = nil)
            -> Result<OAuth2Token, OAuth2Error>
        {
            .failure(
                OAuth2Error(
                    tokenURL: tokenURL, status: response.status, problem: problem, code: code,
                    detail: detail))
        }
        let document = try? JSONParser.parse([UInt8](response.body))
        var members: [String: JSONValue] = [:]
        if case .object(let pairs) = document?.value {
            for pair in pairs where members[pair.key] == nil { members[pair.key] = pair.node.value }
        }
        func text(_ key: String) -> String? {
            if case .string(let value) = members[key] { return value }
            return nil
        }
        guard response.isSuccess else {
            if let code = text("error") {
                return failure(.errorResponse, code: code, detail: text("error_description"))
            }
            if response.isRedirect { return failure(.redirect) }
            return failure(.status, detail: Self.describeBody(response))
        }
        guard case .object = document?.value else {
            return failure(.notJSON, detail: Self.describeBody(response))
        }
        if let code = text("error") {
            return failure(.errorResponse, code: code, detail: text("error_description"))
        }
        guard let accessToken = text("access_token"), !accessToken.isEmpty else {
            return failure(.noAccessToken)
        }
        if let type = text("token_type"), type.lowercased() != "bearer" {
            return failure(.tokenType, detail: type)
        }
        var expiresIn: TimeInterval?
        switch members["expires_in"] {
        case .number(let seconds): expiresIn = seconds
        case .string(let text): expiresIn = TimeInterval(text)
        default: break
        }
        // A lifetime that is no number of seconds ahead says nothing usable: the token is
        // kept until the API rejects it.
        if let seconds = expiresIn, !(seconds > 0 && seconds.isFinite) { expiresIn = nil }
        return .success(
            OAuth2Token(
                accessToken: accessToken, expiresIn: expiresIn,
                refreshToken: text("refresh_token").flatMap { $0.isEmpty ? nil : $0 },
                scope: text("scope")))
    }

    /// `text/html, 1234 bytes`: what came instead of a token, without its contents.
    private static func describeBody(_ response: HTTPResponse) -> String {
        let type = response.headers["Content-Type"] ?? "no Content-Type"
        return "\(type), \(response.bodyCount) bytes"
    }
}

/// A token endpoint's answer (RFC 6749 §5.1).
public struct OAuth2Token: Sendable, Hashable {
    /// The access token, sent as `Authorization: Bearer …`.
    public var accessToken: String
    /// Its lifetime in seconds from the response (`expires_in`); `nil` when not given.
    public var expiresIn: TimeInterval?
    /// A new refresh token (`refresh_token`), if the server issued one.
    public var refreshToken: String?
    /// The scopes granted, if the server said.
    public var scope: String?

    public init(
        accessToken: String, expiresIn: TimeInterval? = nil, refreshToken: String? = nil,
        scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
    }
}

/// No token came from the token endpoint: what it answered (the OAuth error code and
/// description, a status, a body that is no token) or why it could not be asked. The
/// description names the endpoint, without credentials, and never a secret the client sent.
public struct OAuth2Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Problem: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An OAuth error response (`{"error": "invalid_client", …}`), see ``OAuth2Error/code``.
        public static let errorResponse = Problem(rawValue: "errorResponse")
        /// A status that is not success, with no OAuth error in the body.
        public static let status = Problem(rawValue: "status")
        /// A redirect: token requests carry the client's credentials and are not redirected.
        public static let redirect = Problem(rawValue: "redirect")
        /// A success whose body is not a JSON object.
        public static let notJSON = Problem(rawValue: "notJSON")
        /// A success without an `access_token`.
        public static let noAccessToken = Problem(rawValue: "noAccessToken")
        /// A `token_type` other than `Bearer`, which cannot be sent as one.
        public static let tokenType = Problem(rawValue: "tokenType")
        /// The request failed on the way (``OAuth2Error/transportError``).
        public static let transport = Problem(rawValue: "transport")
    }

    /// The token endpoint, without credentials.
    public let tokenURL: URL
    /// The status it answered with, when it answered.
    public let status: Int?
    public let problem: Problem
    /// The OAuth error code (`error`: `invalid_client`, `invalid_grant`…).
    public let code: String?
    /// The server's `error_description`, or what came instead of a token, or the token type.
    public let detail: String?
    /// The transport's error, for ``Problem/transport``.
    public let transportError: HTTPError?

    public init(
        tokenURL: URL, status: Int?, problem: Problem, code: String? = nil, detail: String? = nil,
        transportError: HTTPError? = nil
    ) {
        self.tokenURL = HTTPError.withoutCredentials(tokenURL)
        self.status = status
        self.problem = problem
        self.code = code.map { Self.shown($0, limit: 80) }
        self.detail = detail.map { Self.shown($0, limit: 300) }
        self.transportError = transportError
    }

    /// Whether asking again can give another answer: a failure on the way, a server error
    /// (5xx) or a rate limit (429, 408) may, whatever its body says; an OAuth error (a wrong
    /// secret, a revoked refresh token), a redirect or a response that is no token will not.
    public var isPermanent: Bool {
        if let status, status == 408 || status == 429 || status >= 500 { return false }
        if problem == .transport { return transportError?.kind == .invalidURL }
        return true
    }

    public var description: String {
        let endpoint = "token endpoint \(tokenURL.absoluteString)"
        let answered = "\(endpoint) answered \(status.map(String.init) ?? "nothing")"
        switch problem {
        case .errorResponse:
            return "\(answered): \(code ?? "error")" + (detail.map { " (\($0))" } ?? "")
        case .redirect:
            return
                "\(answered), a redirect; token requests carry the client's credentials and are not redirected (give the URL it redirects to)"
        case .notJSON:
            return "\(answered) with a body that is not a JSON object (\(detail ?? "no body"))"
        case .noAccessToken:
            return "\(answered) without an access_token"
        case .tokenType:
            return "\(answered) a token of type \"\(detail ?? "")\"; only Bearer tokens can be sent"
        case .transport:
            return
                "\(endpoint) could not be asked: \(transportError.map { "\($0.kind): \($0.message)" } ?? "no answer")"
        default:
            return "\(answered) with no OAuth error (\(detail ?? "no body"))"
        }
    }

    /// A server's text as shown in a message: one line, at most `limit` characters.
    private static func shown(_ text: String, limit: Int) -> String {
        let line = String(
            text.unicodeScalars.map {
                $0.properties.generalCategory == .control ? " " : Character($0)
            })
        return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }
}

extension OAuth2Error: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
