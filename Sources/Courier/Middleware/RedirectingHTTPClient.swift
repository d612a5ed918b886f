/// Follows redirects above any transport, by the rules of ``RedirectState``.
///
/// Transports never follow redirects themselves, so both behave the same and credentials are
/// never carried to another origin.
/// ```swift
/// let client = RedirectingHTTPClient(wrapping: URLSessionHTTPClient(), maxHops: 5)
/// ```
/// A ``Handler`` sees each redirect before it is followed, and follows it, changes the next
/// request or stops there (the redirect is then the answer):
/// ```swift
/// let client = RedirectingHTTPClient(wrapping: transport) { redirect, next in
///     next.url.host == "downloads.example.com" ? next : nil   // follow only to our CDN
/// }
/// ```
public struct RedirectingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    /// Decides one hop: given the redirect response and the request ``RedirectState`` would
    /// send next (credentials already dropped for another origin), returns the request to
    /// send (that one, or a changed one) or `nil` to stop and return the redirect itself.
    ///
    /// The request returned is the one sent, and the rules judge it as if the redirect had
    /// named it (``RedirectState/take(_:proposed:)``): the next relative `Location` resolves
    /// against its URL; a method and URL already sent is a loop (a request that leads out of
    /// a loop is followed); and its origin, against the redirected request's, decides the
    /// credentials. On another origin it carries none of the redirected request's
    /// credentials (dropped even when the handler moved a same-origin hop there or put them
    /// back; a credential the handler sets to a value of its own is sent as set) and no
    /// secret body (refused with `.invalidRequest`). On the same origin, the credentials the
    /// proposal dropped for another origin are sent again.
    ///
    /// For a streamed request (``HTTPClient/stream(_:bufferLimit:)``) the handler is asked when
    /// the redirect's head arrives, and the response it sees has no body.
    public typealias Handler =
        @Sendable (_ redirect: HTTPResponse, _ next: HTTPRequest) ->
        HTTPRequest?

    public let wrapped: Wrapped
    public let maxHops: Int
    private let handler: Handler?

    /// - Parameters:
    ///   - maxHops: the most redirects one request may follow (default 10).
    ///   - handler: asked before each hop; `nil` follows every redirect the rules allow.
    public init(wrapping wrapped: Wrapped, maxHops: Int = 10, handler: Handler? = nil) {
        self.wrapped = wrapped
        self.maxHops = maxHops
        self.handler = handler
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        if handler != nil { return try await performAskingHandler(request) }
        let response = try await wrapped.perform(request.redirectHop)
        // Most responses are not redirects: their path holds nothing else across an await (an
        // async function's values live in the task's heap frame).
        guard RedirectState.location(of: response) != nil else { return response }
        return try await follow(from: request, first: response)
    }

    /// The hops after `first`, a redirect.
    private func follow(from request: HTTPRequest, first: HTTPResponse) async throws
        -> HTTPResponse
    {
        var state = RedirectState(request: request, maxHops: maxHops)
        var response = first
        while let next = try state.next(after: response) {
            response = try await wrapped.perform(next.redirectHop)
        }
        response.redirectCount = state.hops
        response.requestHeaders = first.requestHeaders
        return response
    }

    /// Every hop with the handler's say. A streamed hop is decided on its head, when the
    /// handler is asked (once) whether the redirect is followed, so that a redirect the
    /// handler stops at reaches the reader whole and one it follows never does. What the
    /// handler returns is taken into the state (``RedirectState/take(_:proposed:)``), which
    /// judges it and gives the request sent: the next hop starts from it.
    private func performAskingHandler(_ request: HTTPRequest) async throws -> HTTPResponse {
        var state = RedirectState(request: request, maxHops: maxHops)
        var firstHeaders: HTTPHeaders?
        while true {
            let decided = Locked<HTTPRequest??>(nil)
            let probe = state
            let handler = self.handler
            let (attempt, _) = state.current.attempt { status, headers in
                let head = HTTPResponse(status: status, headers: headers, url: probe.current.url)
                var trial = probe
                do {
                    guard let proposed = try trial.proposal(after: head) else { return true }
                    let next = handler?(head, proposed)
                    decided.withLock { $0 = .some(next) }
                    guard let next else { return true }
                    _ = try trial.take(next, proposed: proposed)
                    return false
                } catch {
                    return false  // the hop fails below with this error, as unstreamed
                }
            }
            var response = try await wrapped.perform(attempt)
            if firstHeaders == nil { firstHeaders = response.requestHeaders }
            guard
                let proposed = try Self.judging(response, { try state.proposal(after: response) }),
                let next = decided.withLock({ $0 }) ?? handler?(response, proposed)
            else {
                // Not a redirect, or one the handler stops at: the answer.
                response.redirectCount = state.hops
                response.requestHeaders = firstHeaders ?? response.requestHeaders
                return response
            }
            _ = try Self.judging(response, { try state.take(next, proposed: proposed) })
        }
    }

    /// Runs a decision on `response`, a redirect: a hop it refuses fails with that response's
    /// status (``HTTPError/status``), so that the failure says what the server answered.
    private static func judging<T>(_ response: HTTPResponse, _ decide: () throws -> T) throws
        -> T
    {
        do {
            return try decide()
        } catch var error as HTTPError {
            if error.status == nil { error.status = response.status }
            throw error
        }
    }
}
