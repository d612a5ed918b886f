import Foundation

/// How requests prove who is calling. Every form is treated as a secret: its header is dropped
/// on a cross-origin redirect and redacted in logs, and a `.query` key is redacted from every
/// URL an error or log shows.
public enum Authentication: Sendable, Hashable {
    /// `Authorization: Bearer <token>`.
    case bearer(String)
    /// `Authorization: Basic <base64(user:password)>`.
    case basic(user: String, password: String)
    /// An API key in a header, for example `X-Api-Key`.
    case header(name: String, value: String)
    /// An API key as a query item, for example `?api_key=…`.
    case query(name: String, value: String)
    /// A short-lived token from a ``TokenProvider``, sent as `Authorization: Bearer <token>`
    /// and refreshed once when the server answers 401, concurrent 401s sharing one refresh
    /// (``AuthenticatingHTTPClient``, which ``DefaultAPIClient`` puts in its stack).
    /// ```swift
    /// let configuration = APIConfiguration(baseURL: url, auth: .provider(MyTokens()))
    /// ```
    case provider(TokenSource)

    /// Tokens from `provider`, refreshed on 401.
    public static func provider(_ provider: any TokenProvider) -> Authentication {
        .provider(TokenSource(provider))
    }

    /// Whether a request's own `headers` set the field these credentials go in (an
    /// `Authorization` of its own, or the `.header` key's name): then the request's are sent,
    /// as its other headers replace the configuration's (trial X: the configured token
    /// replaced the request's own; a provided token did too, added below by its middleware).
    func isOverridden(by headers: HTTPHeaders) -> Bool {
        switch self {
        case .bearer, .basic, .provider: headers.contains("Authorization")
        case .header(let name, _): headers.contains(name)
        case .query: false
        }
    }

    /// Adds the credentials to a request.
    public func apply(to request: inout HTTPRequest) {
        switch self {
        case .bearer(let token):
            request.headers.replaceOrAdd("Authorization", "Bearer \(token)")
        case .basic(let user, let password):
            let encoded = Data("\(user):\(password)".utf8).base64EncodedString()
            request.headers.replaceOrAdd("Authorization", "Basic \(encoded)")
        case .header(let name, let value):
            request.headers.replaceOrAdd(name, value)
            request.secretHeaderNames.insert(name.lowercased())
        case .query(let name, let value):
            request.url = URLBuilder.appending(
                [URLQueryItem(name: name, value: value)], to: request.url)
            request.secretQueryNames.insert(name)
        case .provider:
            // The token is fetched per request, by the middleware that can refresh it.
            break
        }
    }
}

/// A ``TokenProvider`` held by reference, so that ``Authentication`` stays `Hashable`: two
/// sources are equal when they are the same source.
public final class TokenSource: Sendable, Hashable {
    public let provider: any TokenProvider

    public init(_ provider: any TokenProvider) { self.provider = provider }

    public static func == (left: TokenSource, right: TokenSource) -> Bool { left === right }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
