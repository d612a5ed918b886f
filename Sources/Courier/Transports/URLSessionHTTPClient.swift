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
        /// The largest response body accepted in memory; a larger one fails with `.bodyTooLarge`.
        /// Bodies sent to a file (``HTTPRequest/bodyDestination``) have no cap.
        public var maxResponseBytes: Int
        /// The most connections kept to one host.
        public var maxConnectionsPerHost: Int

        public init(
            timeout: TimeInterval = 60,
            maxResponseBytes: Int = 64 << 20,
            maxConnectionsPerHost: Int = 64
        ) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    public let configuration: Configuration
    private let session: URLSession
    private let delegate: URLSessionTaskRouter

    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, base: .ephemeral)
    }

    /// A client whose session starts from `session`'s configuration (its proxy and connection
    /// settings), as code written for a plain `URLSession` client expects. Its
    /// `timeoutIntervalForResource` becomes ``Configuration/timeout``, the deadline of a request
    /// that names none (`DefaultAPIClient` names `APIConfiguration.timeoutInterval`, which
    /// wins); its `timeoutIntervalForRequest` is not used: a request's timeout is its whole
    /// deadline, on both transports.
    ///
    /// The client runs its own session over that configuration, because it needs its own
    /// delegate (redirects returned as they are, the size cap, deadlines); cookies and caching
    /// stay off, and `session` itself is not used.
    public convenience init(session: URLSession) {
        let base = session.configuration
        var configuration = Configuration()
        if base.timeoutIntervalForResource > 0, base.timeoutIntervalForResource < 7 * 24 * 3600 {
            configuration.timeout = base.timeoutIntervalForResource
        }
        if base.httpMaximumConnectionsPerHost > 0 {
            configuration.maxConnectionsPerHost = base.httpMaximumConnectionsPerHost
        }
        self.init(configuration: configuration, base: base)
    }

    private init(configuration: Configuration, base: URLSessionConfiguration) {
        self.configuration = configuration
        let sessionConfiguration = base.copy() as! URLSessionConfiguration
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maxConnectionsPerHost
        // FoundationNetworking ends a request after the session's `timeoutIntervalForRequest`
        // (60 s by default) without a byte, whatever the request's own `timeoutInterval`:
        // a request given 900 s timed out at 60 (seen: a cancellation test on a loaded
        // machine; a slow server answering after 70 s). The request's `timeout` is its whole
        // deadline on both transports (the client's own timer, below), so this one is put out
        // of its way; a week, which FoundationNetworking's milliseconds still hold.
        sessionConfiguration.timeoutIntervalForRequest = Self.idleTimeoutOutOfTheWay
        delegate = URLSessionTaskRouter()
        session = URLSession(
            configuration: sessionConfiguration, delegate: delegate,
            delegateQueue: URLSessionDelegateQueue())
    }

    /// The session's idle timeout: longer than any request's deadline here.
    static let idleTimeoutOutOfTheWay: TimeInterval = 7 * 24 * 3600

    deinit {
        // invalidateAndCancel waits for the session's work queue, which a hostile transfer can
        // keep busy for many seconds (URLSessionTaskRouter.canceller): the last reference going
        // must not hold up its thread, nor a process on its way out. It goes after the cancels
        // already queued: one run after it trapped in FoundationNetworking (a CI run's hostile
        // pass, a client let go right after a capped body's cancel was queued).
        delegate.invalidate(session)
    }

    /// The `Accept-Encoding` this client sends when the caller set none: the codings its system
    /// decodes. On Linux, FoundationNetworking has the system libcurl decode every coding that
    /// libcurl was built with (Debian's: gzip, deflate, br and zstd), so this client offers what
    /// `CurlHTTPClient` offers (``WireRequest/acceptEncoding``); on Darwin, what Apple's
    /// URLSession offers itself. Neither tells whether a compressed stream reached its end, so
    /// a compressed body comes back with ``HTTPResponse/bodyEndUnchecked`` set
    /// (docs/transports.md, "Compressed responses").
    #if canImport(FoundationNetworking)
        public static let acceptEncoding = WireRequest.acceptEncoding
    #else
        public static let acceptEncoding = "gzip, deflate, br"
    #endif

    /// Ends every request under way with `.cancelled` at once, and fails every later one the
    /// same way, as ``CurlHTTPClient/shutdown()`` does. The session itself is let go when the
    /// client is (FoundationNetworking stops a session that is invalidated while a request
    /// is being made by trapping).
    public func shutdown() {
        delegate.shutDown()
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard !delegate.isShutDown else {
            throw HTTPError(.cancelled, "the client has shut down", url: request.displayURL)
        }
        let wire = try WireRequest(request, acceptEncoding: Self.acceptEncoding)
        guard request.tls.isDefault else {
            throw HTTPError(
                .unsupported,
                "URLSession on Linux cannot apply TLS options (\(request.tls.setOptionNames.joined(separator: ", "))); use CurlHTTPClient",
                url: request.displayURL)
        }
        let timeout = request.timeout ?? configuration.timeout
        let urlRequest = Self.urlRequest(for: request, wire: wire, timeout: timeout)
        let display = request.displayURL
        // The upload is checked before the destination is touched (as on curl).
        var upload: UploadFile?
        if let body = request.streamedBody {
            upload = try await UploadFile.prepare(body, url: display)
        }
        defer { upload?.remove() }
        let sink = try BodyFileWriter.opening(for: request)
        let task =
            upload.map { session.uploadTask(with: urlRequest, fromFile: $0.url) }
            ?? session.dataTask(with: urlRequest)
        let started = ContinuousClock.now
        // A Dispatch timer, not a Task: it fires even when callers keep every thread of the
        // cooperative pool busy. A cancelled work item stays queued until its time comes, so it
        // holds the task weakly: held strongly, every finished task (response and all) stayed
        // alive for the whole timeout, some 200 MiB at 2,000 requests a second (`make soak`).
        let delegate = self.delegate
        let deadline = DispatchWorkItem { [weak task] in
            if let task { delegate.expire(task) }
        }
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
                        continuation: continuation, url: display,
                        maxBytes: configuration.maxResponseBytes, sink: sink,
                        expectsBody: request.method != .head,
                        destination: request.bodyDestination, progress: request.progress,
                        bodyLength: upload.map { Int64($0.length) }
                            ?? request.body.map { Int64($0.count) }))
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
            if started { delegate.cancel(task) }
        }
        let elapsed = started.duration(to: .now)
        var response = HTTPResponse(
            status: outcome.response.statusCode,
            headers: Self.headers(of: outcome.response),
            body: outcome.body,
            url: wire.url,
            timings: HTTPTimings(total: elapsed.seconds),
            requestHeaders: Self.sentHeaders(of: urlRequest, wire: wire),
            savedBody: sink?.saved,
            bodyEndUnchecked: URLSessionTaskRouter.uncheckedCoding(
                of: outcome.response, expectsBody: request.method != .head))
        response.secrets = RequestSecrets(of: request)
        return response
    }

    /// FoundationNetworking adds `Accept-Language`, `Connection: keep-alive` and, for a body
    /// without a type, a form `Content-Type`. A blank value makes its libcurl leave a field out
    /// (a header with nothing after the colon is not sent), so each is blanked unless the
    /// caller set it: the wire then carries exactly ``WireRequest``'s fields.
    static func urlRequest(for request: HTTPRequest, wire: WireRequest, timeout: TimeInterval)
        -> URLRequest
    {
        var urlRequest = URLRequest(url: wire.url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpBody = request.body
        for field in wire.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        #if canImport(FoundationNetworking)
            var suppressed = ["Accept-Language", "Connection"]
            if request.body != nil || request.streamedBody != nil || request.method == .post {
                suppressed.append("Content-Type")
            }
            // A bodiless DELETE, OPTIONS or PUT went with `Content-Length: 0`, which curl does
            // not send (trial CC); a POST carries one on both.
            if request.body == nil, request.streamedBody == nil, request.method != .post {
                suppressed.append("Content-Length")
            }
            for name in suppressed where !wire.headers.contains(name) {
                urlRequest.setValue(" ", forHTTPHeaderField: name)
            }
        #endif
        return urlRequest
    }

    /// The fields of `wire` as FoundationNetworking sends them, for ``HTTPResponse/requestHeaders``:
    /// each name as its `URLRequest` spells it (`X-MiXed` goes as `X-Mixed`, `ETag` as
    /// `Etag`), a repeated field as one, its values joined with `,`; in `wire`'s order (its
    /// own is a dictionary's). Trial CC: the response said the fields went as given.
    static func sentHeaders(of urlRequest: URLRequest, wire: WireRequest) -> HTTPHeaders {
        #if canImport(FoundationNetworking)
            let fields = urlRequest.allHTTPHeaderFields ?? [:]
            var sent = HTTPHeaders()
            for field in wire.headers where !sent.contains(field.name) {
                guard
                    let entry = fields.first(where: {
                        $0.key.caseInsensitiveCompare(field.name) == .orderedSame
                    })
                else { continue }
                sent.add(entry.key, entry.value)
            }
            return sent
        #else
            return wire.headers
        #endif
    }

    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
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
