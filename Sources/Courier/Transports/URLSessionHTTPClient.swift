import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``HTTPClient`` over Foundation's `URLSession` (FoundationNetworking on Linux).
///
/// It returns 3xx responses as they are (wrap it in ``RedirectingHTTPClient`` to follow them),
/// stores no cookies and caches nothing. On Linux, FoundationNetworking joins repeated response
/// header fields into one comma-separated value and cannot turn TLS validation off; see
/// `docs/transports.md`.
public final class URLSessionHTTPClient: HTTPClient {
    /// Settings for the whole client.
    public struct Configuration: Sendable {
        /// Deadline for requests that set no `timeout` of their own, in seconds.
        public var timeout: TimeInterval
        /// The largest response body accepted; a larger one fails with `.bodyTooLarge`.
        public var maxResponseBytes: Int
        /// The most connections kept to one host.
        public var maxConnectionsPerHost: Int

        public init(
            timeout: TimeInterval = 60,
            maxResponseBytes: Int = 64 << 20,
            maxConnectionsPerHost: Int = 16
        ) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    public let configuration: Configuration
    private let session: URLSession
    private let delegate: URLSessionTaskRouter

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maxConnectionsPerHost
        delegate = URLSessionTaskRouter()
        session = URLSession(
            configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", request.url.host != nil else {
            throw HTTPError(.invalidURL, "only absolute http and https URLs", url: request.url)
        }
        let timeout = request.timeout ?? configuration.timeout
        var urlRequest = URLRequest(url: request.url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpBody = request.body
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        let task = session.dataTask(with: urlRequest)
        let started = ContinuousClock.now
        // A Dispatch timer, not a Task: it fires even when callers keep every thread of the
        // cooperative pool busy.
        let delegate = self.delegate
        let deadline = DispatchWorkItem { delegate.expire(task) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
        defer { deadline.cancel() }
        // Either the cancel comes first and the task never starts, or the task is registered
        // first and the cancel ends it through the delegate: no caller is left waiting.
        let cancellation = Locked((cancelled: false, started: false))
        let outcome = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(
                    task,
                    URLSessionTaskRouter.Transfer(
                        continuation: continuation, url: request.url,
                        maxBytes: configuration.maxResponseBytes))
                let start = cancellation.withLock { state -> Bool in
                    state.started = !state.cancelled
                    return state.started
                }
                if start { task.resume() } else { delegate.abandon(task) }
            }
        } onCancel: {
            let started = cancellation.withLock { state -> Bool in
                state.cancelled = true
                return state.started
            }
            if started { task.cancel() }
        }
        let elapsed = started.duration(to: .now)
        return HTTPResponse(
            status: outcome.response.statusCode,
            headers: Self.headers(of: outcome.response),
            body: outcome.body,
            url: request.url,
            timings: HTTPTimings(total: elapsed.seconds))
    }

    private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        HTTPHeaders(
            response.allHeaderFields.compactMap { name, value in
                guard let name = name as? String else { return nil }
                return (name, "\(value)")
            }.sorted { $0.0.lowercased() < $1.0.lowercased() })
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    package var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
