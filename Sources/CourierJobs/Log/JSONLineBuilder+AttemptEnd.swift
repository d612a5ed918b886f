import Courier
import Foundation

extension JSONLineBuilder {
    /// The end of an attempt's line, the same in `request` and `token` lines: its `timings`, its
    /// `error` (the transport's, or why its answer failed), `outcome` and `retryInMs`.
    mutating func attemptEnd(
        _ attempt: RetryAttempt, timings: HTTPTimings, outcome: LogOutcome,
        failure: (kind: String, message: String)?, waits: AttemptWaits = AttemptWaits()
    ) {
        beginObject("timings")
        milliseconds("dnsMs", timings.dns)
        milliseconds("connectMs", timings.connect)
        milliseconds("tlsMs", timings.tls)
        milliseconds("firstByteMs", timings.firstByte)
        milliseconds("totalMs", timings.total)
        endObject()
        // What the attempt waited before it was sent (the rate limit and the host's gate),
        // and the host's part (``HostThrottles``), each only when there was one.
        if waits.total > 0 { milliseconds("blockedMs", waits.total) }
        if waits.host > 0 { milliseconds("throttledMs", waits.host) }
        if case .failure(let error) = attempt.outcome {
            beginObject("error")
            string("kind", error.kind.rawValue)
            string("message", error.message)
            endObject()
        } else if let failure {
            value(
                "error",
                .object([("kind", .string(failure.kind)), ("message", .string(failure.message))]))
        }
        string("outcome", outcome.rawValue)
        if let delay = attempt.retryDelay { milliseconds("retryInMs", delay) }
    }
}
