import Courier
import Foundation

/// Right above the transport, in a run whose requests can wait below their host's gate (a
/// rate limit, a shared host budget): a request the gate let through before its host asked for
/// a pause (`Retry-After`), and that then waited for a token, waits for the pause too. Such
/// requests reached the paused host inside its pause (trial O).
///
/// After the pause such a request takes its place in the host's rate (a 429 halved it), as a
/// request the gate admits after the pause does; a quota's count already holds it. A pause
/// (or a place) further off than `maxDelay` refuses the request unsent (`.throttled`), as the
/// gate does; the wait goes on the attempt's `throttledMs` (``HostPauseWaits``).
struct HostPauseGate: HTTPClient {
    let wrapped: AnyHTTPClient
    let hosts: HostThrottles
    /// The longest a request waits here, in seconds: the job's retry `maxDelay`.
    let maxDelay: TimeInterval
    /// The job's rate limit, above: a request held here takes a token again once its place
    /// after the pause comes, so that the requests the pause held leave no faster than the
    /// job's rate either, not all at once (trial P: eight in 4 ms).
    var rateLimit: (limiter: RateLimiter, scope: RateLimitScope)?

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A request the shared budget above held for a pause comes here as the pause ends,
        // with every other it held: it takes its place all the same, once (trial W: seven
        // such requests left within 50 ms). So does one it held behind another's probe at a
        // paced host.
        var heldAbove = HeldByBudget.above
        while try await waitedForPause(request, heldAbove: heldAbove), let rateLimit {
            heldAbove = false
            try await rateLimit.limiter.wait(for: request, scope: rateLimit.scope)
        }
        return try await wrapped.perform(request)
    }

    /// Waits out a pause `request`'s host asked for, and then its place in the host's rate
    /// after the 429 (the requests a pause held leave one by one at that rate, as those the
    /// gate admits after it do); whether there was a pause. `heldAbove`: the shared budget
    /// held the request for a pause that may have just ended: it takes its place as well.
    private func waitedForPause(_ request: HTTPRequest, heldAbove: Bool) async throws -> Bool {
        guard let origin = Origin(request.url) else { return false }
        let time = hosts.time
        let start = time.now()
        let until: ContinuousClock.Instant
        if let paused = hosts.pausedUntil(origin), paused > start {
            until = paused
        } else if heldAbove {
            until = start
        } else {
            return false
        }
        let latest = start + .seconds(maxDelay)
        let slot = hosts.placeHeld(origin, after: until, latest: latest)
        guard slot <= latest else {
            throw HTTPError(
                .throttled,
                HostThrottlingHTTPClient<AnyHTTPClient>.refusal(
                    origin, wait: start.duration(to: slot),
                    hold: until > latest ? .retryAfter : .pace, maxDelay: maxDelay),
                url: request.displayURL)
        }
        defer {
            let waited = start.duration(to: time.now()).seconds
            HostPauseWaits.current?.withLock { $0 += waited }
        }
        do {
            try await time.sleep(for: start.duration(to: slot))
        } catch {
            throw CancelledWait.host.error(url: request.displayURL)
        }
        return true
    }
}

/// Whether the shared host budget above held the request under way, for its host's pause or,
/// at a host paced after a 429, behind another's probe or a spent quota
/// (``HostBudgetHTTPClient``, which binds it around the request it lets go).
enum HeldByBudget {
    @TaskLocal static var above = false
}

/// Where a task's ``AttemptLoop`` learns how long its request waited at the shared
/// ``HostPauseGate`` below it: bound around the attempts, read with each attempt's waits.
enum HostPauseWaits {
    @TaskLocal static var current: Locked<TimeInterval>?
}
