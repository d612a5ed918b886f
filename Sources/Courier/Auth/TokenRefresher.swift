import Foundation

/// The token state ``AuthenticatingHTTPClient`` shares between its requests: one refresh at a
/// time, within a ``RefreshWindow``.
///
/// Callers rejected with the same token wait for the refresh already under way; a caller
/// rejected with a token older than the latest refresh takes the latest. A provider that
/// keeps answering a token the server rejected, after it handed out a fresh one, gets the
/// fresh one sent instead.
actor TokenRefresher {
    private let provider: any TokenProvider
    private let window: RefreshWindow?
    private let leeway: TimeInterval
    private let time: any TimeSource
    private var refreshing: (rejected: String, task: Task<String, any Error>)?
    /// The tokens refreshes replaced (the latest few), and the one the last refresh gave.
    private var replaced: [String] = []
    private var lastRefreshed: String?
    private var refreshTimes: [ContinuousClock.Instant] = []

    init(
        provider: any TokenProvider, window: RefreshWindow?, leeway: TimeInterval,
        time: any TimeSource
    ) {
        self.provider = provider
        self.window = window
        self.leeway = leeway
        self.time = time
    }

    /// The token to send now: the provider's, refreshed first when it is known to be stale.
    ///
    /// A token is refreshed ahead of its expiry once: a provider whose tokens live no longer
    /// than the leeway gets its fresh token sent until it has really expired, not a refresh
    /// before every request. Such refreshes are not the server's doing and do not count
    /// against the ``RefreshWindow``.
    func current() async throws -> String {
        if let refreshing { return try await refreshing.task.value }
        let token = try await provider.currentAccessToken()
        if let lastRefreshed, replaced.contains(token.value) { return lastRefreshed }
        let now = time.date()
        guard token.isStale(at: now, leeway: leeway) else { return token.value }
        if token.value == lastRefreshed, !token.isStale(at: now, leeway: 0) {
            return token.value
        }
        return try await refresh(rejected: token.value, counted: false)
    }

    /// A token to replace `rejected`; a refresh the server asked for (`counted`) counts
    /// against the window.
    func refresh(rejected: String, counted: Bool = true) async throws -> String {
        if let refreshing, refreshing.rejected == rejected {
            return try await refreshing.task.value
        }
        if let lastRefreshed, replaced.contains(rejected) {
            return lastRefreshed  // replaced already, by a refresh for an earlier rejection
        }
        if counted, let window {
            let (recent, allowed) = window.admit(after: refreshTimes, now: time.now())
            refreshTimes = recent
            guard allowed else { throw ExcessiveRefreshError(window: window) }
            refreshTimes.append(time.now())
        }
        let provider = self.provider
        let task = Task { try await provider.refreshToken(rejected: rejected) }
        refreshing = (rejected, task)
        defer { refreshing = nil }
        let fresh = try await task.value
        replaced = Array((replaced + [rejected]).suffix(8))
        lastRefreshed = fresh
        return fresh
    }
}
