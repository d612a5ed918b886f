/// Where a short-lived access token comes from, for ``AuthenticatingHTTPClient``.
public protocol TokenProvider: Sendable {
    /// The token to send now.
    func currentToken() async throws -> String
    /// A new token, because the server rejected `rejected` (a 401).
    func refreshToken(rejected: String) async throws -> String
}
