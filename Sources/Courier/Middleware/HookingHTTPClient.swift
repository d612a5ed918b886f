/// Hooks around any ``HTTPClient`` without subclassing: change a request before it is sent
/// (sign it, add a request id) and see every outcome (metrics, logging).
///
/// ```swift
/// let client = HookingHTTPClient(
///     wrapping: CurlHTTPClient(),
///     willSend: { request in
///         var signed = request
///         signed.headers.replaceOrAdd("X-Request-ID", UUID().uuidString)
///         return signed
///     },
///     didReceive: { request, outcome in metrics.record(request, outcome) })
/// ```
/// `willSend` runs once per call of ``perform(_:)``: below a retry or redirect layer it runs
/// for every attempt or hop, above it once.
public struct HookingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public typealias WillSend = @Sendable (HTTPRequest) async throws -> HTTPRequest
    public typealias DidReceive =
        @Sendable (HTTPRequest, Result<HTTPResponse, any Error>) async -> Void

    public let wrapped: Wrapped
    private let willSend: WillSend?
    private let didReceive: DidReceive?

    /// - Parameters:
    ///   - willSend: returns the request to send; an error it throws is the call's error and
    ///     nothing is sent.
    ///   - didReceive: sees the request as sent and its response or error.
    public init(wrapping wrapped: Wrapped, willSend: WillSend? = nil, didReceive: DidReceive? = nil)
    {
        self.wrapped = wrapped
        self.willSend = willSend
        self.didReceive = didReceive
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let request = try await willSend?(request) ?? request
        do {
            let response = try await wrapped.perform(request)
            await didReceive?(request, .success(response))
            return response
        } catch {
            await didReceive?(request, .failure(error))
            throw error
        }
    }
}
