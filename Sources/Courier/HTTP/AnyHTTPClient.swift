/// A type-erased ``HTTPClient``, for composing middleware over a client chosen at run time.
public struct AnyHTTPClient: HTTPClient {
    private let base: any HTTPClient

    public init(_ base: any HTTPClient) { self.base = base }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await base.perform(request)
    }
}
