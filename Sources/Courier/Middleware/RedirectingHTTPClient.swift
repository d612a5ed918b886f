/// Follows redirects above any transport, by the rules of ``RedirectState``.
///
/// Transports never follow redirects themselves, so both behave the same and credentials are
/// never carried to another origin.
/// ```swift
/// let client = RedirectingHTTPClient(wrapping: URLSessionHTTPClient(), maxHops: 5)
/// ```
public struct RedirectingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public let wrapped: Wrapped
    public let maxHops: Int

    /// - Parameter maxHops: the most redirects one request may follow (default 10).
    public init(wrapping wrapped: Wrapped, maxHops: Int = 10) {
        self.wrapped = wrapped
        self.maxHops = maxHops
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        var state = RedirectState(request: request, maxHops: maxHops)
        var response = try await wrapped.perform(request)
        let firstHopHeaders = response.requestHeaders
        while let next = try state.next(after: response) {
            response = try await wrapped.perform(next)
        }
        response.redirectCount = state.hops
        response.requestHeaders = firstHopHeaders
        return response
    }
}
