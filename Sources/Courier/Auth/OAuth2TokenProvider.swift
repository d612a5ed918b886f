import Foundation

/// Access tokens from an OAuth 2.0 token endpoint, for ``AuthenticatingHTTPClient``: the
/// client-credentials and refresh-token grants of an ``OAuth2Configuration``.
///
/// ```swift
/// let tokens = OAuth2TokenProvider(reports, client: CurlHTTPClient())
/// let api = AuthenticatingHTTPClient(
///     wrapping: CurlHTTPClient(), provider: tokens,
///     origin: Origin(URL(string: "https://api.example.com")!))
/// ```
/// - **One request at a time (single flight).** However many requests need a token at once,
///   one token request is made and they all wait for it; requests rejected with the same token
///   share one refresh. A caller already cancelled starts none (``HTTPError/Kind/cancelled``).
/// - **Refreshed before it expires.** A token with an `expires_in` is replaced once a tenth of
///   its lifetime (at most 30 s) is left, counted from when it was asked for, by the request
///   that finds it so; the tokens handed out carry no expiry of their own, so the client's
///   `expiryLeeway` plays no part. A token without `expires_in` is kept until it is rejected.
/// - **Rotation.** With the refresh-token grant, a `refresh_token` in a response replaces the
///   one presented for every later request, in memory only.
/// - **Failures.** A failed token request fails every request waiting for it, with an
///   ``OAuth2Error`` naming the endpoint, its status and OAuth error. One that asking again
///   cannot mend (``OAuth2Error/isPermanent``: `invalid_client`, `invalid_grant`, a response
///   that is no token) is kept, and every later request gets it without asking again; after a
///   failure on the way, a server error or a rate limit, the next request asks again. More
///   rejections than `rejectionWindow` allows fail with ``ExcessiveRefreshError``.
///
/// Token requests go through `client` as they are: give it a transport (with retries if
/// wanted), not a client that attaches this provider's own tokens, and no redirect-following
/// layer (the request carries the client's secret).
public final class OAuth2TokenProvider: TokenProvider {
    public let configuration: OAuth2Configuration
    private let client: any HTTPClient
    private let time: any TimeSource
    private let rejectionWindow: RefreshWindow
    private let didIssue: (@Sendable (OAuth2Token) -> Void)?
    private let state: Locked<State>

    /// A token being handed out, and when it is due to be replaced.
    private struct Held {
        let value: String
        let refreshAt: Date?

        func isDue(at now: Date) -> Bool { refreshAt.map { now >= $0 } ?? false }
    }

    /// The token request under way and how many callers wait for it.
    private struct Fetch {
        let id: Int
        let task: Task<String, any Error>
        var waiters: Int
    }

    private struct State {
        var held: Held?
        /// The refresh token to present next: the grant's, then the latest issued.
        var refreshToken: String?
        var fetch: Fetch?
        var fetches = 0
        /// A failure that asking again cannot mend.
        var failure: OAuth2Error?
        var rejections: [ContinuousClock.Instant] = []
    }

    /// - Parameters:
    ///   - client: what sends the token requests.
    ///   - rejectionWindow: the most refreshes for rejected tokens in a span of time.
    ///   - didIssue: called with every token the endpoint issues before it is handed out, so
    ///     that a log's redactor knows the access and refresh tokens before anything could
    ///     show them.
    public init(
        _ configuration: OAuth2Configuration, client: any HTTPClient,
        time: any TimeSource = SystemTimeSource(),
        rejectionWindow: RefreshWindow = RefreshWindow(maxRefreshes: 10, interval: 300),
        didIssue: (@Sendable (OAuth2Token) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.client = client
        self.time = time
        self.rejectionWindow = rejectionWindow
        self.didIssue = didIssue
        var initial = State()
        if case .refreshToken(let token) = configuration.grant { initial.refreshToken = token }
        state = Locked(initial)
    }

    /// Seconds before a token's expiry at which it is replaced: a tenth of its lifetime, at
    /// most 30.
    public static func refreshMargin(lifetime: TimeInterval) -> TimeInterval {
        min(30, lifetime / 10)
    }

    public func currentToken() async throws -> String {
        try await currentAccessToken().value
    }

    /// The token held, or a new one when there is none yet or it is due to be replaced.
    public func currentAccessToken() async throws -> AccessToken {
        let now = time.date()
        let step = state.withLock { state -> Step in
            if let failure = state.failure { return .fail(failure) }
            if state.fetch != nil { return join(&state) }
            if let held = state.held, !held.isDue(at: now) { return .use(held.value) }
            return start(&state, cancelled: Task.isCancelled)
        }
        return AccessToken(try await take(step))
    }

    /// A token other than `rejected`: the one held if a refresh replaced it already, else a
    /// new one (the request under way, if any).
    public func refreshToken(rejected: String) async throws -> String {
        let now = time.date()
        let clock = time.now()
        let step = state.withLock { state -> Step in
            if let failure = state.failure { return .fail(failure) }
            if let held = state.held, held.value != rejected, !held.isDue(at: now) {
                return .use(held.value)
            }
            if state.fetch != nil { return join(&state) }
            if state.held?.value == rejected {
                let (recent, allowed) = rejectionWindow.admit(after: state.rejections, now: clock)
                state.rejections = recent
                guard allowed else { return .excessive }
                state.rejections.append(clock)
                state.held = nil  // never handed out again
            }
            return start(&state, cancelled: Task.isCancelled)
        }
        return try await take(step)
    }

    private enum Step {
        case use(String)
        case wait(id: Int, Task<String, any Error>)
        case fail(OAuth2Error)
        case excessive
        case cancelled
    }

    private func join(_ state: inout State) -> Step {
        state.fetch!.waiters += 1
        return .wait(id: state.fetch!.id, state.fetch!.task)
    }

    /// A new token request, unless the caller is cancelled: a run that stops cancels its
    /// requests, and one cancelled on its way here must not ask for a token (a loaded run's
    /// stop sent a second token request in its grace period).
    private func start(_ state: inout State, cancelled: Bool) -> Step {
        if cancelled { return .cancelled }
        state.fetches += 1
        let id = state.fetches
        let refreshToken = state.refreshToken
        let task = Task { [self] in try await fetch(id: id, refreshToken: refreshToken) }
        state.fetch = Fetch(id: id, task: task, waiters: 1)
        return .wait(id: id, task)
    }

    private func take(_ step: Step) async throws -> String {
        switch step {
        case .use(let token):
            return token
        case .fail(let error):
            throw error
        case .excessive:
            throw ExcessiveRefreshError(window: rejectionWindow)
        case .cancelled:
            throw HTTPError(
                .cancelled, "the request was cancelled before its token was asked for",
                url: configuration.tokenURL)
        case .wait(let id, let task):
            // A waiter that is cancelled stops waiting for nobody: the request is cancelled
            // when the last one is (a run that stops), and goes on for the others.
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                let last = self.state.withLock { state -> Bool in
                    guard state.fetch?.id == id else { return false }
                    state.fetch!.waiters -= 1
                    return state.fetch!.waiters == 0
                }
                if last { task.cancel() }
            }
        }
    }

    /// One token request, and what it leaves in the state.
    private func fetch(id: Int, refreshToken: String?) async throws -> String {
        let started = time.date()
        let result: Result<OAuth2Token, OAuth2Error>
        do {
            let response = try await client.perform(
                configuration.tokenRequest(refreshToken: refreshToken))
            result = configuration.token(from: response)
        } catch let error as HTTPError where error.kind != .cancelled {
            result = .failure(
                OAuth2Error(
                    tokenURL: configuration.tokenURL, status: nil, problem: .transport,
                    transportError: error))
        } catch {
            state.withLock { if $0.fetch?.id == id { $0.fetch = nil } }
            throw error
        }
        switch result {
        case .success(let token):
            didIssue?(token)
            let refreshAt = token.expiresIn.map {
                started.addingTimeInterval($0 - Self.refreshMargin(lifetime: $0))
            }
            state.withLock { state in
                state.held = Held(value: token.accessToken, refreshAt: refreshAt)
                if let rotated = token.refreshToken, state.refreshToken != nil {
                    state.refreshToken = rotated
                }
                if state.fetch?.id == id { state.fetch = nil }
            }
            return token.accessToken
        case .failure(let error):
            state.withLock { state in
                if error.isPermanent { state.failure = error }
                if state.fetch?.id == id { state.fetch = nil }
            }
            throw error
        }
    }
}
