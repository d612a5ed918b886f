import Foundation

/// Where a short-lived access token comes from, for ``AuthenticatingHTTPClient``.
///
/// The client asks for the current token before every request, so a provider keeps its token
/// and answers from memory; it is asked to refresh when the server rejects a token, or before
/// sending when ``currentAccessToken()`` says the token has expired.
public protocol TokenProvider: Sendable {
    /// The token to send now.
    func currentToken() async throws -> String
    /// A new token, because the server rejected `rejected` (a 401), or because it expired.
    func refreshToken(rejected: String) async throws -> String
    /// The token to send now and when it stops being good, for providers that know (an OAuth2
    /// `expires_in`): a token that expires within the client's leeway is refreshed before it
    /// is sent, saving a request with a dead token and its 401. The default is
    /// ``currentToken()`` with no expiry.
    func currentAccessToken() async throws -> AccessToken
}

extension TokenProvider {
    public func currentAccessToken() async throws -> AccessToken {
        AccessToken(try await currentToken())
    }
}

/// A token and when it expires.
public struct AccessToken: Sendable, Hashable {
    /// The token as it is sent.
    public var value: String
    /// When the token stops being accepted; `nil` when unknown.
    public var expiresAt: Date?

    public init(_ value: String, expiresAt: Date? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }

    /// Whether the token must be refreshed before it is sent at `now`: it expires within
    /// `leeway` seconds (a token about to expire may die on the way).
    public func isStale(at now: Date, leeway: TimeInterval) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= leeway
    }
}
