import Courier
import CourierCurl
import Foundation

/// Composes the job's middleware over its transport, in one place:
///
///     per task (``AttemptLoop``): retries → host throttle (one state per run) → redirects
///     shared by the run: cookies (when the job asks) → rate limit → shared budget → transport
///
/// Retries are outermost so that each attempt is one log line whose URL is where the redirects
/// ended. Every attempt, a retry too, waits for its host's pause, quota or pace; the bound on
/// that wait is the task's `maxDelay`, and the wait goes on the task's log line. Redirects sit
/// above the rate limit so that every hop waits for a token: the limit counts what the servers
/// see. Cookies sit below redirects so that a redirect's `Set-Cookie` is stored and each hop
/// gets its own origin's cookies. The transport never follows redirects itself.
enum HTTPStack {
    /// - Parameter concurrency: the run's cap on tasks in flight, which is also the most
    ///   connections the transport keeps to one host: no task waits for a connection, and no
    ///   connection is opened only to be closed.
    /// - Returns: the run's client under the redirects, which each task's ``AttemptLoop`` and
    ///   the OAuth2 token requests send through (a token request carries the client's secret,
    ///   and a token endpoint that redirects is an error, ``OAuth2Sessions``); and the
    ///   executors to run the tasks on: the curl transport's event loops
    ///   (``CurlHTTPClient/taskExecutors``), none with URLSession.
    static func shared(
        for job: Job, backend: Backend, concurrency: Int, time: any TimeSource,
        hosts: HostThrottles? = nil, shard: Shard? = nil, offline: OfflineHTTPClient? = nil,
        budget: HostBudgetStore? = nil,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) -> (client: AnyHTTPClient, executors: [any TaskExecutor]) {
        // A rehearsal (`--offline`) answers from its recording: nothing goes to the network.
        let transport: any HTTPClient =
            offline
            ?? backend.makeClient(
                timeout: job.timeout, maxResponseBytes: job.maxBodyBytes,
                maxConnectionsPerHost: concurrency, http2: job.http2)
        let executors = (transport as? CurlHTTPClient)?.taskExecutors ?? []
        // Nearest the transport: a write's `request.start` line goes on file as its request
        // goes out, after every wait above (``WriteStarts``); only in a run that can send a
        // write (a replay of logs alone has no specs: its requests' methods decide), so a
        // run of reads pays nothing for it.
        var client = AnyHTTPClient(transport)
        if job.tasks.isEmpty || job.tasks.contains(where: \.isWrite) {
            client = AnyHTTPClient(WriteStartAnnouncer(wrapped: client))
        }
        let limit = job.rateLimit?.share(for: shard)
        let limiter = limit.map {
            RateLimiter(perSecond: $0.perSecond, burst: $0.burst, time: time)
        }
        // Above it, where requests wait below their host's gate: a pause their host asked for
        // while they waited holds them too, and then they take a rate-limit token again.
        if let hosts, limit != nil || budget != nil {
            var gate = HostPauseGate(wrapped: client, hosts: hosts, maxDelay: job.retry.maxDelay)
            if let limit, let limiter { gate.rateLimit = (limiter, limit.scope) }
            client = AnyHTTPClient(gate)
        }
        // Above it, the budget every courier process shares for each host (`"shared"`): each
        // request and redirect hop takes its place, after the run's own waits.
        if let budget {
            client = AnyHTTPClient(
                HostBudgetHTTPClient(
                    wrapped: client, store: budget, time: time, lease: job.timeout,
                    maxDelay: job.retry.maxDelay, hosts: hosts, warn: warn))
        }
        if let limit, let limiter {
            client = AnyHTTPClient(
                RateLimitingHTTPClient(wrapping: client, limiter: limiter, scope: limit.scope))
        }
        if job.cookies {
            client = AnyHTTPClient(CookieStoringHTTPClient(wrapping: client, time: time))
        }
        return (client, executors)
    }

    /// The run's per-host state, unless the job turns it off (`"hostThrottle": false`). A
    /// configured rate limit is the most any host's rate climbs back to after 429s.
    static func hostThrottles(for job: Job, time: any TimeSource, shard: Shard?) -> HostThrottles? {
        guard job.hostThrottle else { return nil }
        return HostThrottles(
            settings: HostThrottle.Settings(ceiling: job.rateLimit?.share(for: shard).perSecond),
            time: time)
    }

    /// A task's request loop (``AttemptLoop``): its retries, its host's gate when the run has
    /// one, and its redirects, over the run's shared client. Statuses the task expects are
    /// successes, never retried.
    ///
    /// The observer gets each attempt with what it waited before it was handed to the
    /// transport (``AttemptWaits``: its host's gate and the job's rate limit), and its
    /// `duration` without them: a task's `maxMs` judges the request, not the queue.
    static func retrying(
        _ shared: AnyHTTPClient, task: ExpandedTask, time: any TimeSource, hosts: HostThrottles?,
        rateLimited: Bool = false, rules: [ResponseRule] = [],
        writeStart: (@Sendable (HTTPRequest) -> Void)? = nil, trace: TraceSettings? = nil,
        observer: @escaping @Sendable (_ attempt: RetryAttempt, _ waits: AttemptWaits) -> Void
    ) -> AttemptLoop {
        var policy = task.retry
        if let expected = task.expectStatus { policy.retryableStatuses.subtract(expected) }
        // `onResponse` decides first; then `expect`, for a status the task accepts.
        var judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?
        if !task.expectation.isEmpty || !rules.isEmpty {
            judge = { response, sent in
                if let verdict = ResponseRule.verdict(rules, on: response) { return verdict }
                guard !task.expectation.isEmpty, task.accepts(response.status) else {
                    return .usual
                }
                return task.expectation.failure(for: response, durationMs: sent * 1000) == nil
                    ? .usual : .unmet
            }
        }
        return AttemptLoop(
            shared: shared, policy: policy, time: time, hosts: hosts,
            trace: trace?.propagates == true ? trace : nil, judge: judge,
            writeStart: writeStart.map(WriteStarts.Recorder.init), rateLimited: rateLimited,
            observer: observer)
    }
}
