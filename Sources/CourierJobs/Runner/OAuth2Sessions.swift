import Courier
import Foundation

/// The run's OAuth2 clients (`auth.oauth2`, docs/job-file.md): one ``OAuth2TokenProvider``
/// for each distinct client of the job and its tasks, so that every task of a client shares its
/// token and its one token request at a time.
///
/// Token requests go to the token URL alone, below the redirect layer (they carry the client's
/// secret; a redirect is an error), with the job's TLS settings, timeout, rate limit and retry
/// policy (a POST, retried all the same: asking for a token twice changes nothing), each
/// attempt a `token` line of the log. The tokens are taught to the run's redactor before they
/// are used, and live in memory only: every run, `--resume` and `replay` asks for its own.
struct OAuth2Sessions: Sendable {
    /// What a rejected attempt's `renewedToken` names when an OAuth2 token was renewed.
    static let logName = "oauth2"

    private let providers: [OAuth2Configuration: OAuth2TokenProvider]

    init(job: Job, client: AnyHTTPClient, log: RunLog, redactor: Redactor, time: any TimeSource) {
        var clients = Set(job.tasks.compactMap(\.oauth2))
        if let oauth2 = job.oauth2 { clients.insert(oauth2) }
        var policy = job.retry
        policy.retriesNonIdempotent = true
        var providers: [OAuth2Configuration: OAuth2TokenProvider] = [:]
        for configuration in clients {
            let endpoint = TokenEndpoint(
                configuration: configuration, client: client, log: log, time: time,
                tls: job.tls, timeout: job.timeout, policy: policy)
            providers[configuration] = OAuth2TokenProvider(
                configuration, client: endpoint, time: time
            ) { token in
                redactor.learn(token.accessToken)
                if let rotated = token.refreshToken { redactor.learn(rotated) }
            }
        }
        self.providers = providers
    }

    func provider(for configuration: OAuth2Configuration) -> OAuth2TokenProvider? {
        providers[configuration]
    }
}

/// Sends one token request with the job's retries, and logs each attempt as a `token` line.
private struct TokenEndpoint: HTTPClient {
    let configuration: OAuth2Configuration
    let client: AnyHTTPClient
    let log: RunLog
    let time: any TimeSource
    let tls: TLSOptions
    let timeout: TimeInterval
    let policy: RetryPolicy

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.tls = tls
        request.timeout = timeout
        let url = request.displayURL
        let grant = configuration.grant.name
        let last = Locked<RetryAttempt?>(nil)
        let retrying = RetryingHTTPClient(
            wrapping: client, policy: policy, time: time,
            observer: { [log] attempt in
                if attempt.retryDelay != nil {
                    try? log.token(url: url, grant: grant, attempt: attempt, outcome: .retry)
                } else {
                    last.withLock { $0 = attempt }
                }
            })
        let response: HTTPResponse
        do {
            response = try await retrying.perform(request)
        } catch {
            if let attempt = last.withLock({ $0 }) {
                try? log.token(url: url, grant: grant, attempt: attempt, outcome: .failed)
            }
            throw error
        }
        if let attempt = last.withLock({ $0 }) {
            // Judged as the provider will judge it, so that the line says why it failed.
            if case .failure(let problem) = configuration.token(from: response) {
                try? log.token(
                    url: url, grant: grant, attempt: attempt, outcome: .failed,
                    failure: ("token", problem.description))
            } else {
                try? log.token(url: url, grant: grant, attempt: attempt, outcome: .ok)
            }
        }
        return response
    }
}

extension JobRunner {
    /// For a task that sends an OAuth2 client's tokens, `client` under an
    /// ``AuthenticatingHTTPClient`` that attaches the current token to requests to the task's
    /// own origin (a next page elsewhere gets none), refreshes it once on 401 (all the tasks
    /// rejected with one token share one refresh) and resends once; `nil` for other tasks.
    /// A task that expects 401 gets the token and no refresh.
    /// - Parameter willResend: called with ``OAuth2Sessions/logName`` between a refresh and
    ///   the resend, to log the rejected attempt.
    func authorizing(
        _ client: AttemptLoop, for task: ExpandedTask,
        sessions: OAuth2Sessions?, willResend: @escaping @Sendable (String) -> Void
    ) -> AnyHTTPClient? {
        guard let configuration = task.oauth2,
            let provider = sessions?.provider(for: configuration)
        else { return nil }
        return AnyHTTPClient(
            AuthenticatingHTTPClient(
                wrapping: AnyHTTPClient(client), provider: provider,
                rejectedStatuses: task.accepts(401) ? [] : [401],
                origin: Origin(task.request.url),
                // The provider bounds refreshes for rejected tokens across the run, and
                // replaces a token before it expires by itself.
                refreshWindow: nil, expiryLeeway: 0, time: time,
                willResend: { _ in willResend(OAuth2Sessions.logName) }
            ) { request, token in
                var request = request
                request.headers.replaceOrAdd("Authorization", "Bearer \(token)")
                request.secretHeaderNames.insert("authorization")
                return request
            })
    }
}
