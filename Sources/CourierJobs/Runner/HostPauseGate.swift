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

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
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
                    throw HTTPError(
                        .cancelled, "cancelled while waiting for the host", url: request.displayURL)
                }
            }
        }
        return try await wrapped.perform(request)
    }
}

/// Where a task's ``AttemptLoop`` learns how long its request waited at the shared
/// ``HostPauseGate`` below it: bound around the attempts, read with each attempt's waits.
enum HostPauseWaits {
    @TaskLocal static var current: Locked<TimeInterval>?
}
