import Foundation

/// The steps of a retry loop that ``RetryingHTTPClient`` and the job runner's own loop (which
/// also gates hosts and follows redirects) take alike.
extension RetryAttempt {
    /// The request for attempt `number`: streamed, a response `policy` would retry never
    /// reaches the reader (its channel decides by the same rule, on the head), and one that
    /// did is the answer: once the reader has bytes, the request is not sent again. Any other
    /// request comes back as it is, with no channel.
    package static func request(
        _ request: HTTPRequest, number: Int, policy: RetryPolicy, time: any TimeSource
    ) -> (HTTPRequest, BodyChunkChannel?) {
        guard request.bodyDestination.channel != nil else { return (request, nil) }
        return request.attempt { status, headers in
            let head = HTTPResponse(status: status, headers: headers, url: request.url)
            return policy.decide(
                after: number, request: request, outcome: .success(head), now: time.date(),
                random: 0
            ).delay == nil
        }
    }

    /// A finished attempt with what follows it: a retry after the delay `policy` decides, or
    /// none when it is the last (the task was cancelled, or a streamed head reached the
    /// reader: `final`).
    package static func settled(
        _ request: HTTPRequest, number: Int, outcome: Result<HTTPResponse, HTTPError>,
        verdict: RetryPolicy.ResponseVerdict, final: Bool, policy: RetryPolicy,
        time: any TimeSource, random: () -> Double, duration: TimeInterval, started: Date
    ) -> RetryAttempt {
        let decision =
            Task.isCancelled || final
            ? .stop
            : policy.decide(
                after: number, request: request, outcome: outcome, verdict: verdict,
                now: time.date(), random: random())
        return RetryAttempt(
            request: request, number: number, outcome: outcome, retryDelay: decision.delay,
            duration: duration, started: started, stopReason: decision.stopReason)
    }

    /// This attempt made the last after all: the wait for the retry after it was cut short.
    /// Its error is that one's, which the loop throws.
    package func cancelledWhileWaiting() -> (attempt: RetryAttempt, error: HTTPError) {
        let cancelled = CancelledWait.retry.error(url: request.displayURL)
        var last = self
        last.outcome = .failure(cancelled)
        last.retryDelay = nil
        last.stopReason = cancelled.message
        return (last, cancelled)
    }
}

extension HTTPRequest {
    /// A redirect hop's request: streamed, a redirect's body never reaches the reader, only
    /// the body of the response that is not followed.
    package var redirectHop: HTTPRequest {
        attempt { status, headers in
            !(HTTPResponse.redirectStatuses.contains(status) && headers.contains("Location"))
        }.request
    }
}
