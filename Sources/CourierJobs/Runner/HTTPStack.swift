import Courier
import CourierCurl
import Foundation

/// Composes the job's middleware over its transport, in one place:
///
///     retry (per task) → redirects → cookies (when the job asks) → rate limit → transport
///
/// Retry is outermost so that each attempt is one log line whose URL is where the redirects
/// ended. Redirects sit above the rate limit so that every hop waits for a token: the limit
/// counts what the servers see. Cookies sit below redirects so that a redirect's `Set-Cookie`
/// is stored and each hop gets its own origin's cookies. The transport never follows redirects
/// itself.
enum HTTPStack {
    /// - Parameter concurrency: the run's cap on tasks in flight, which is also the most
    ///   connections the transport keeps to one host: no task waits for a connection, and no
    ///   connection is opened only to be closed.
    /// - Returns: the client; the same without its redirect layer, for OAuth2 token requests
    ///   (they carry the client's secret, and a token endpoint that redirects is an error,
    ///   ``OAuth2Sessions``); and the executors to run the tasks on: the curl transport's event
    ///   loops (``CurlHTTPClient/taskExecutors``), none with URLSession.
    static func shared(
        for job: Job, backend: Backend, concurrency: Int, time: any TimeSource,
        shard: Shard? = nil
    ) -> (client: AnyHTTPClient, unredirected: AnyHTTPClient, executors: [any TaskExecutor]) {
        let transport = backend.makeClient(
            timeout: job.timeout, maxResponseBytes: job.maxBodyBytes,
            maxConnectionsPerHost: concurrency, http2: job.http2)
        let executors = (transport as? CurlHTTPClient)?.taskExecutors ?? []
        var client = AnyHTTPClient(transport)
        if let limit = job.rateLimit?.share(for: shard) {
            client = AnyHTTPClient(
                RateLimitingHTTPClient(
                    wrapping: client, perSecond: limit.perSecond, burst: limit.burst,
                    scope: limit.scope, time: time))
        }
        if job.cookies {
            client = AnyHTTPClient(CookieStoringHTTPClient(wrapping: client, time: time))
        }
        return (AnyHTTPClient(RedirectingHTTPClient(wrapping: client)), client, executors)
    }

    /// The per-task retry layer. Statuses the task expects are successes, never retried.
    static func retrying(
        _ shared: AnyHTTPClient, task: ExpandedTask, time: any TimeSource,
        observer: @escaping @Sendable (RetryAttempt) -> Void
    ) -> RetryingHTTPClient<AnyHTTPClient> {
        var policy = task.retry
        if let expected = task.expectStatus { policy.retryableStatuses.subtract(expected) }
        var check: (@Sendable (HTTPResponse, TimeInterval) -> Bool)?
        if !task.expectation.isEmpty {
            check = { response, seconds in
                !task.accepts(response.status)
                    || task.expectation.failure(for: response, durationMs: seconds * 1000) == nil
            }
        }
        return RetryingHTTPClient(
            wrapping: shared, policy: policy, time: time, check: check, observer: observer)
    }
}
