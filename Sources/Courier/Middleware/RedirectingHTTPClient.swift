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
        let response = try await wrapped.perform(Self.hop(request))
        // Most responses are not redirects: their path holds nothing else across an await (an
        // async function's values live in the task's heap frame).
        guard RedirectState.location(of: response) != nil else { return response }
        return try await follow(from: request, first: response)
    }

    /// A hop's request: streamed, a redirect's body never reaches the reader, only the body
    /// of the response that is not followed.
    private static func hop(_ request: HTTPRequest) -> HTTPRequest {
        request.attempt { status, headers in
            !(HTTPResponse.redirectStatuses.contains(status) && headers.contains("Location"))
        }.request
    }

    /// The hops after `first`, a redirect.
    private func follow(from request: HTTPRequest, first: HTTPResponse) async throws
        -> HTTPResponse
    {
        var state = RedirectState(request: request, maxHops: maxHops)
        var response = first
        while let next = try state.next(after: response) {
            response = try await wrapped.perform(Self.hop(next))
        }
        response.redirectCount = state.hops
        response.requestHeaders = first.requestHeaders
        return response
    }
}
