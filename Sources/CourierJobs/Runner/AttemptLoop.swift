import Courier
import Foundation

/// A task's request with its retries, its host's gate and its redirects, sent as one loop over
/// the run's shared client (cookies, rate limit, shared budget, transport):
///
///     each attempt, as ``RetryPolicy`` decides:
///         its span (`traceparent`) → its host's gate (``HostThrottles``)
///         → each hop (``RedirectState``) through the shared client → the host told
///         → the attempt judged, logged, and retried or not
///
/// The library's ``RetryingHTTPClient`` over ``HostThrottlingHTTPClient`` over
/// ``RedirectingHTTPClient`` does the same for its users, and decides by the same values. A
/// run sends every request through this one function instead: as layers, each kept an async
/// frame and an `AnyHTTPClient` hop for as long as its request was in flight (about 5 KB a
/// task, docs/benchmarks.md), and each request went down and back up through all of them.
///
/// What it keeps across its awaits is in one ``Run`` object; the work between the awaits is in
/// synchronous helpers, so that the async frame holds little. (A class, so that each async
/// helper's frame holds a reference to it, not a copy of its fields.)
final class AttemptLoop: HTTPClient {
    /// The run's client under the redirects: shared by every task.
    let shared: AnyHTTPClient
    /// The task's retries; its expected statuses are never retried.
    let policy: RetryPolicy
    let time: any TimeSource
    /// The run's per-host state, or `nil` when the job turns the throttle off.
    let hosts: HostThrottles?
    /// A span per attempt, when the run propagates trace context.
    let trace: TraceSettings?
    /// What the caller makes of a response, given how long it took once its waits are taken
    /// out (seconds): `onResponse` rules and the task's expectations.
    let judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?
    /// Bound around the attempts for a write task: its `request.start` line just before each
    /// request goes to the transport (``WriteStarts``).
    let writeStart: WriteStarts.Recorder?
    /// Whether a rate limit below adds its waits to the attempt (``RateLimitWaits``).
    let rateLimited: Bool
    /// Told of each attempt with what it waited before it was sent; its `duration` is without
    /// those waits.
    let observer: @Sendable (RetryAttempt, AttemptWaits) -> Void
    /// The jitter's source, in [0, 1).
    let random: @Sendable () -> Double

    /// The most redirects one attempt follows, as ``RedirectingHTTPClient``'s default.
    static let maxHops = 10

    init(
        shared: AnyHTTPClient, policy: RetryPolicy, time: any TimeSource, hosts: HostThrottles?,
        trace: TraceSettings?,
        judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?,
        writeStart: WriteStarts.Recorder?, rateLimited: Bool,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        observer: @escaping @Sendable (RetryAttempt, AttemptWaits) -> Void
    ) {
        self.shared = shared
        self.policy = policy
        self.time = time
        self.hosts = hosts
        self.trace = trace
        self.judge = judge
        self.writeStart = writeStart
        self.rateLimited = rateLimited
        self.observer = observer
        self.random = random
    }

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let run = Run(request)
        guard writeStart != nil || rateLimited else { return try await attempts(run) }
        return try await bound(run)
    }

    /// The attempts with the task-locals the shared layers report to, bound once for every
    /// attempt; each attempt takes what the rate limit added (``takeWaits(_:)``).
    @inline(never)
    private func bound(_ run: Run) async throws -> HTTPResponse {
        if rateLimited {
            (run.rateLimitWaited, run.pauseWaited) = (Locked(0), Locked(0))
        }
        return try await WriteStarts.$current.withValue(writeStart) {
            try await RateLimitWaits.$current.withValue(run.rateLimitWaited) {
                try await HostPauseWaits.$current.withValue(run.pauseWaited) {
                    try await attempts(run)
                }
            }
        }
    }

    /// The attempts, until one is the answer. This frame lives as long as the request: it
    /// holds only `run`; each await's values are in `run` or in the small frames below.
    @inline(never)
    private func attempts(_ run: Run) async throws -> HTTPResponse {
        while true {
            do {
                if begin(run) {
                    if let wait = run.hostWait { try await waitForHost(wait, run) }
                    while try await send(run) {}
                }
            } catch {
                try failed(error, run)
            }
            guard let delay = settle(run) else { return try run.answer() }
            try await backOff(delay, run)
            run.number += 1
        }
    }

    /// The wait before the next attempt; cut short (the run stops), the last attempt is final.
    @inline(never)
    private func backOff(_ delay: TimeInterval, _ run: Run) async throws {
        do {
            try await time.sleep(for: .milliseconds(Int64((delay * 1000).rounded())))
        } catch {
            throw cancelledWhileWaiting(run)
        }
    }

    /// Sends the attempt's next hop; `true` when a redirect to follow came back.
    @inline(never)
    private func send(_ run: Run) async throws -> Bool {
        try take(await shared.perform(run.hop.redirectHop), run)
    }

    /// One ``perform(_:)`` call's attempts so far: owned by the task that runs it.
    final class Run {
        /// The attempt's request: the caller's, with the attempt's span when it has one (each
        /// attempt replaces the one before's).
        var attempted: HTTPRequest
        /// 1 for the first try.
        var number = 1
        /// The wait the host's gate gave the attempt under way.
        var hostWait: Duration?
        var started = Date()
        var clockStart = ContinuousClock.now
        /// A streamed attempt's channel, which says whether its head reached the reader.
        var channel: BodyChunkChannel?
        /// The request of the attempt's next hop (its first: the attempt's request).
        var hop: HTTPRequest
        /// How the attempt under way ended, once it has.
        var outcome: Result<HTTPResponse, HTTPError>?
        /// The host whose gate admitted the attempt under way, until it is told how it ended.
        var admitted: Origin?
        var sentAt: ContinuousClock.Instant?
        /// The attempt's redirects, from its first redirect on.
        var redirects: RedirectState?
        var firstRequestHeaders: HTTPHeaders = [:]
        /// What the attempt under way waited: its host's gate here, the rate limit below.
        var waits = AttemptWaits()
        var rateLimitWaited: Locked<TimeInterval>?
        /// What the attempt under way waited below for a pause its host asked for after its
        /// gate let it through (``HostPauseGate``).
        var pauseWaited: Locked<TimeInterval>?
        /// The attempt that ended last, and what it waited before its request went out.
        var last: RetryAttempt?
        var lastBeforeSent: TimeInterval = 0

        init(_ request: HTTPRequest) {
            (attempted, hop) = (request, request)
        }

        /// The last attempt's response, or its error.
        func answer() throws -> HTTPResponse {
            guard let last else { throw HTTPError(.cancelled, "no attempt was made", url: nil) }
            return try last.outcome.get()
        }
    }

    /// Starts the next attempt: its clocks, the request it sends (its own span; streamed, a
    /// response the policy would retry never reaches the reader), and its host's gate: the
    /// wait it gives (``Run/hostWait``), or its refusal (`false`, the attempt's outcome).
    @inline(never)
    private func begin(_ run: Run) -> Bool {
        run.started = time.date()
        run.clockStart = time.now()
        (run.redirects, run.outcome) = (nil, nil)
        if let trace {
            // A `traceparent` the request already carries (a replayed log's) named an
            // earlier attempt's span. The attempt is told with its span: a line with no
            // response logs the headers it was sent (trial O had none for failed attempts).
            var traced = run.attempted
            traced.headers["traceparent"] = trace.traceparent(span: TraceContext.newSpanID())
            traced.headers["tracestate"] = trace.state
            run.attempted = traced
        }
        let (sent, channel) = RetryAttempt.request(
            run.attempted, number: run.number, policy: policy, time: time)
        run.channel = channel
        run.hop = sent
        do {
            run.hostWait = try admit(sent, run)
        } catch {
            run.outcome = .failure(error)
            return false
        }
        run.sentAt = run.hostWait == nil ? time.now() : nil
        return true
    }

    /// The wait the host's gate gives the attempt (`nil`: none), or its refusal: a wait
    /// longer than the task's `maxDelay` ends the attempt, as a `Retry-After` does.
    @inline(never)
    private func admit(_ request: HTTPRequest, _ run: Run) throws(HTTPError) -> Duration? {
        guard let hosts, let origin = Origin(request.url) else { return nil }
        switch hosts.admit(origin, maxWait: .seconds(policy.maxDelay)) {
        case .send(let wait, _):
            run.admitted = origin
            return wait > .zero ? wait : nil
        case .refuse(let wait, let hold):
            throw HTTPError(
                .throttled,
                HostThrottlingHTTPClient<AnyHTTPClient>.refusal(
                    origin, wait: wait, hold: hold, maxDelay: policy.maxDelay),
                url: request.displayURL)
        }
    }

    @inline(never)
    private func waitForHost(_ wait: Duration, _ run: Run) async throws {
        let start = time.now()
        do {
            try await time.sleep(for: wait)
        } catch {
            run.waits.host += start.duration(to: time.now()).seconds
            throw CancelledWait.host.error(url: run.hop.displayURL)
        }
        let now = time.now()
        run.sentAt = now
        run.waits.host += start.duration(to: now).seconds
    }

    /// Takes a hop's response: the next hop's request when it is a redirect to follow
    /// (`true`), else the attempt's answer, which its host learns from.
    @inline(never)
    private func take(_ response: HTTPResponse, _ run: Run) throws -> Bool {
        if run.redirects == nil {
            // Most responses are not redirects: no state is made for them.
            if RedirectState.location(of: response) != nil {
                run.redirects = RedirectState(request: run.hop, maxHops: Self.maxHops)
                run.firstRequestHeaders = response.requestHeaders
                // What the first hop waited: the next hops' waits come after it went out.
                let below = [run.rateLimitWaited, run.pauseWaited].compactMap { $0 }
                run.waits.firstHop =
                    run.waits.host + below.reduce(0) { sum, waited in sum + waited.withLock { $0 } }
            }
        }
        if let next = try run.redirects?.next(after: response) {
            run.hop = next
            return true
        }
        var response = response
        if let redirects = run.redirects {
            response.redirectCount = redirects.hops
            response.requestHeaders = run.firstRequestHeaders
        }
        if let origin = run.admitted {
            hosts?.finish(origin, response: response, sentAt: run.sentAt)
        }
        run.admitted = nil
        run.outcome = .success(response)
        return false
    }

    /// The attempt's error; its host is told that it ended without a response. An error that
    /// is not the transport's ends the request.
    @inline(never)
    private func failed(_ error: any Error, _ run: Run) throws {
        if let origin = run.admitted {
            hosts?.finish(origin, response: nil, sentAt: run.sentAt)
        }
        run.admitted = nil
        guard let error = error as? HTTPError else { throw error }
        run.outcome = .failure(error)
    }

    /// What the attempt under way waited, taken: the next one starts from none.
    private func takeWaits(_ run: Run) -> AttemptWaits {
        var waits = run.waits
        run.waits = AttemptWaits()
        run.sentAt = nil
        let take = { (waited: Locked<TimeInterval>) in
            waited.withLock { value in
                defer { value = 0 }
                return value
            }
        }
        if let waited = run.rateLimitWaited { waits.rateLimit += take(waited) }
        if let waited = run.pauseWaited { waits.host += take(waited) }
        return waits
    }

    /// Decides what follows an attempt and tells the observer; a `final` attempt (its
    /// streamed head reached the reader) is never retried.
    @inline(never)
    private func settle(_ run: Run) -> TimeInterval? {
        let request = run.attempted
        let outcome =
            run.outcome ?? .failure(HTTPError(.cancelled, "no response", url: request.displayURL))
        let final = run.channel?.reachedReader == true
        let duration = run.clockStart.duration(to: time.now()).seconds
        let waits = takeWaits(run)
        let sentFor = max(0, duration - waits.total)
        var verdict = RetryPolicy.ResponseVerdict.usual
        if let judge, case .success(let response) = outcome { verdict = judge(response, sentFor) }
        let attempt = RetryAttempt.settled(
            request, number: run.number, outcome: outcome, verdict: verdict, final: final,
            policy: policy, time: time, random: random, duration: sentFor, started: run.started)
        observer(attempt, waits)
        run.last = attempt
        run.lastBeforeSent = waits.beforeSent
        return attempt.retryDelay
    }

    /// The wait before a retry was cut short: the attempt just reported is the last one after
    /// all, and the observer hears so, so that every task ends with a final word.
    @inline(never)
    private func cancelledWhileWaiting(_ run: Run) -> HTTPError {
        guard let last = run.last else {
            return CancelledWait.retry.error(url: nil)
        }
        let (final, error) = last.cancelledWhileWaiting()
        // Stamped as the attempt it repeats (when its request went out); its waits were told
        // once, with that attempt.
        observer(final, AttemptWaits(firstHop: run.lastBeforeSent))
        return error
    }
}
