import Courier

/// A token provider for the fixture's seed API (`/v1/users`): hands out `stale` until asked to
/// refresh, then the seed token, so that the first request of each provider meets a 401.
public final class SeedTokens: TokenProvider {
    private let refreshed = Locked(false)

    public init() {}

    public func currentToken() async throws -> String {
        refreshed.withLock { $0 } ? "seed-token" : "stale"
    }

    public func refreshToken(rejected: String) async throws -> String {
        refreshed.withLock { $0 = true }
        return "seed-token"
    }
}
