import Courier
import Foundation

/// Right above the transport, in a run whose requests can wait below their host's gate (a
/// rate limit, a shared host budget): a request the gate let through before its host asked for
/// a pause (`Retry-After`), and that then waited for a token, waits for the pause too. Such
/// requests reached the paused host inside its pause (trial O).
///
/// Only the pause is looked at: a quota's count already holds the requests the gate took, and
/// a pace spaces admissions, not sends. A pause longer than `maxDelay` refuses the request
/// unsent (`.throttled`), as the gate does; the wait goes on the attempt's `throttledMs`
/// (``HostPauseWaits``).
struct HostPauseGate: HTTPClient {
    let wrapped: AnyHTTPClient
    let hosts: HostThrottles
    /// The longest a request waits here, in seconds: the job's retry `maxDelay`.
    let maxDelay: TimeInterval
    /// The job's rate limit, above: a request held here takes a token again once the pause
    /// is over, so that the requests the pause held leave at the job's rate, not all at once
    /// (trial P: eight in 4 ms).
    var rateLimit: (limiter: RateLimiter, scope: RateLimitScope)?

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        while try await waitedForPause(request), let rateLimit {
            try await rateLimit.limiter.wait(for: request, scope: rateLimit.scope)
        }
        return try await wrapped.perform(request)
    }

    /// Waits out a pause `request`'s host asked for; whether there was one.
    private func waitedForPause(_ request: HTTPRequest) async throws -> Bool {
        if let origin = Origin(request.url), let until = hosts.pausedUntil(origin) {
            let time = hosts.time
            let start = time.now()
            let wait = start.duration(to: until)
            if wait > .zero {
                guard wait <= .seconds(maxDelay) else {
                    throw HTTPError(
                        .throttled,
                        HostThrottlingHTTPClient<AnyHTTPClient>.refusal(
                            origin, wait: wait, hold: .retryAfter, maxDelay: maxDelay),
                        url: request.displayURL)
                }
                defer {
                    let waited = start.duration(to: time.now()).seconds
                    HostPauseWaits.current?.withLock { $0 += waited }
                }
                do {
                    try await time.sleep(for: wait)
                } catch {
                    throw CancelledWait.host.error(url: request.displayURL)
                }
                return true
            }
        }
        return false
    }
}

/// Where a task's ``AttemptLoop`` learns how long its request waited at the shared
/// ``HostPauseGate`` below it: bound around the attempts, read with each attempt's waits.
enum HostPauseWaits {
    @TaskLocal static var current: Locked<TimeInterval>?
}
