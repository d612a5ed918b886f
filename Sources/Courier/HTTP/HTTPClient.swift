/// The seam every transport and middleware implements.
///
/// A client returns a response for every HTTP status, 3xx, 4xx and 5xx included, and throws
/// ``HTTPError`` only when no response could be had (bad URL, DNS, connect, TLS, timeout, size
/// cap, cancellation, reset). Status checks belong to the layers above.
///
/// Middleware are clients that wrap another one:
/// ```swift
/// let client = RedirectingHTTPClient(wrapping: URLSessionHTTPClient())
/// let response = try await client.perform(HTTPRequest(url: url))
/// ```
public protocol HTTPClient: Sendable {
    /// Sends the request and returns the complete response.
    func perform(_ request: HTTPRequest) async throws -> HTTPResponse
}
