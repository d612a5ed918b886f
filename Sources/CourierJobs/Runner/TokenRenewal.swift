import Courier
import Foundation

/// Renewing a captured login token when the server rejects it: the tasks whose `auth` uses
/// one (``TaskSpec/refreshableToken``) are sent through ``AuthenticatingHTTPClient`` with a
/// ``CapturedToken``, which sends the login task again.
extension JobRunner {
    /// One ``CapturedToken`` for each capture that some task's `auth` can renew.
    /// - Parameter oauth2: the run's OAuth2 clients, for a login task that sends one's token.
    func renewableTokens(
        feed: TaskFeed, shared: AnyHTTPClient, log: RunLog, progress: Progress,
        oauth2: OAuth2Sessions? = nil
    ) -> [String: CapturedToken] {
        var tokens: [String: CapturedToken] = [:]
        for name in Set(job.tasks.compactMap(\.refreshableToken)) {
            tokens[name] = CapturedToken(name: name, feed: feed) { [self] in
                try await renew(
                    name, feed: feed, shared: shared, log: log, progress: progress,
                    oauth2: oauth2)
            }
        }
        return tokens
    }

    /// For a task whose token can be renewed, `client` under an ``AuthenticatingHTTPClient``
    /// that renews it on 401 and resends once; `nil` for every other task (most: they use
    /// `client` as it is, with nothing more allocated).
    /// - Parameter willResend: called with the capture's name between a renewal and the
    ///   resend, to log the rejected attempt.
    func renewing(
        _ client: AttemptLoop, for task: ExpandedTask,
        tokens: [String: CapturedToken], willResend: @escaping @Sendable (String) -> Void
    ) -> AnyHTTPClient? {
        // A replay has no captures, and its tasks need not come from this job's specs.
        guard !tokens.isEmpty, let spec = task.spec(in: job) else { return nil }
        guard let name = spec.refreshableToken, let token = tokens[name], let auth = spec.auth,
            let bindings = task.authBindings, !task.accepts(401)
        else { return nil }
        return AnyHTTPClient(
            AuthenticatingHTTPClient(
                wrapping: AnyHTTPClient(client), provider: token,
                // Credentials stay with their server: a next page elsewhere gets none.
                origin: Origin(task.request.url),
                willResend: { _ in willResend(name) }
            ) { request, value in
                Self.signed(request, auth: auth, bindings: bindings, token: name, value: value)
            })
    }

    /// The request with the task's `auth` rendered again with `value` for `{token}`.
    static func signed(
        _ request: HTTPRequest, auth: Authentication, bindings: [String: String], token: String,
        value: String
    ) -> HTTPRequest {
        var bindings = bindings
        bindings[token] = value
        let rendered = auth.rendered(bindings)
        var request = request
        if case .query(let name, _) = rendered,
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        {
            // The old key leaves the query before the new one is added.
            let encoded = URLBuilder.percentEncode(name)
            components.percentEncodedQueryItems = components.percentEncodedQueryItems?.filter {
                $0.name != encoded
            }
            if components.percentEncodedQueryItems?.isEmpty == true {
                components.percentEncodedQuery = nil
            }
            request.url = components.url ?? request.url
        }
        rendered.apply(to: &request)
        return request
    }

    /// Sends the task that captures `name` again, with its retries, logs it as a renewal, and
    /// returns the value it captured.
    private func renew(
        _ name: String, feed: TaskFeed, shared: AnyHTTPClient, log: RunLog, progress: Progress,
        oauth2: OAuth2Sessions?
    ) async throws -> String {
        guard let task = feed.producerTask(of: name) else {
            throw CapturedToken.Unavailable(
                description: "the task that captures \"\(name)\" cannot be built again")
        }
        let safe = task.isWrite(in: job) == false
        // The final attempt, and what it waited before it was sent.
        let last = Locked<(attempt: RetryAttempt?, waits: AttemptWaits)>((nil, AttemptWaits()))
        let client = HTTPStack.retrying(
            shared, task: task, time: requestTime, hosts: hosts,
            rateLimited: job.rateLimit != nil || job.sharedHosts,
            rules: task.responseRules(in: job), trace: options.trace
        ) { attempt, waits in
            if attempt.retryDelay != nil {
                try? log.request(
                    AttemptRecord(
                        task: task.id, attempt: attempt, outcome: .retry, renewal: true,
                        waits: waits, safe: safe))
            } else {
                last.withLock { $0 = (attempt, waits) }
            }
        }
        // A login that sends an OAuth2 client's token gets it as the login's first run did.
        let sender =
            authorizing(client, for: task, sessions: oauth2, willResend: { _ in })
            ?? AnyHTTPClient(client)
        _ = try? await sender.perform(task.request)
        let (final, waits) = last.withLock { ($0.attempt, $0.waits) }
        guard let attempt = final else {
            throw CapturedToken.Unavailable(
                description: "the run stopped before \(task.id) was sent again")
        }
        progress.requestsSent(attempt.requestsSent)
        let renewed = Locked(false)
        var result = evaluate(
            attempt, of: task, page: nil,
            captures: { values, rule in
                feed.renew(values, for: rule)
                if rule.name == name, !values.isEmpty { renewed.withLock { $0 = true } }
            }, streamed: nil)
        if result.files != nil { result = await completingFiles(result) }
        if result.ok, !renewed.withLock({ $0 }) {
            result.ok = false
            result.failure = ("capture", "the response held no value for \"\(name)\"")
        }
        try? log.request(
            AttemptRecord(
                task: task.id, attempt: attempt, outcome: result.ok ? .ok : .failed,
                savedTo: result.savedTo, failure: attempt.outcome.isFailure ? nil : result.failure,
                renewal: true, waits: waits, safe: safe))
        guard result.ok, let value = feed.currentValue(of: name) else {
            let reason = result.failure?.message ?? "it failed"
            throw CapturedToken.Unavailable(
                description: "\(task.id), sent again to renew \"\(name)\", failed: \(reason)")
        }
        return value
    }
}
