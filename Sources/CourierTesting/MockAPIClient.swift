import Courier
import Foundation

/// An ``APIClient`` for testing services, the way the layered-client articles write one:
/// it records the last request's path, query items and body (a `content` body and
/// `queryParameters` as ``DefaultAPIClient`` encodes them) and returns the response (or
/// error) set for it, whatever the request.
///
/// ```swift
/// let mock = MockAPIClient()
/// mock.setMockResponse(Page<User>(page: 1, results: [], totalPages: 1, totalResults: 0))
/// _ = try await UserService(apiClient: mock).listUsers(page: 2)
/// #expect(mock.lastPath == "/v1/users")
/// ```
public final class MockAPIClient: APIClient, Sendable {
    /// The response or error was not set, or is of another type than the request's.
    public struct NoResponse: Error, CustomStringConvertible, LocalizedError {
        public let expected: String
        public var description: String { "MockAPIClient: no response of type \(expected) was set" }
        /// The ``description``, for a test failure that shows `localizedDescription`.
        public var errorDescription: String? { description }
    }

    private struct State: @unchecked Sendable {
        // `Any` holds a value set by the test; it is only read back as the request's type.
        var response: Any?
        var error: (any Error)?
        var lastPath: String?
        var lastMethod: HTTPMethod?
        var lastQueryItems: [URLQueryItem]?
        var lastHeaders: [String: String]?
        var lastBody: Data?
        var count = 0
    }

    private let state = Locked(State())

    public init() {}

    public var lastPath: String? { state.withLock { $0.lastPath } }
    public var lastMethod: HTTPMethod? { state.withLock { $0.lastMethod } }
    public var lastQueryItems: [URLQueryItem]? { state.withLock { $0.lastQueryItems } }
    public var lastHeaders: [String: String]? { state.withLock { $0.lastHeaders } }
    public var lastBody: Data? { state.withLock { $0.lastBody } }
    /// How many requests were performed.
    public var requestCount: Int { state.withLock { $0.count } }

    /// The value every later request returns (it must be the request's `Response` type).
    public func setMockResponse<Response>(_ response: Response) {
        state.withLock {
            $0.response = response
            $0.error = nil
        }
    }

    /// The error every later request throws.
    public func setMockError(_ error: any Error) {
        state.withLock { $0.error = error }
    }

    /// The body and query items `request` sends, as ``DefaultAPIClient`` builds them: its
    /// `content` encoded and its `queryParameters` form-encoded, with the default
    /// configuration's encoders (trial VVV: a body given as `content` was recorded as `nil`).
    /// A multipart body, which streams, is `nil`.
    private static func sent(_ request: some APIRequest) -> (body: Data?, query: [URLQueryItem]?) {
        guard request.content != nil || request.queryParameters != nil,
            let base = URL(string: "http://mock.invalid"),
            let built = try? DefaultAPIClient(
                httpClient: StubHTTPClient(), configuration: APIConfiguration(baseURL: base)
            ).makeHTTPRequest(for: request)
        else { return (request.body, request.queryItems) }
        let query = URLComponents(url: built.url, resolvingAgainstBaseURL: false)?.queryItems
        return (built.body ?? request.body, query ?? request.queryItems)
    }

    public func perform<Request: APIRequest>(_ request: Request) async throws -> Request.Response {
        // Encoded before the lock is taken: another test's request waits on none of it.
        let sent = Self.sent(request)
        let (response, error) = state.withLock { state -> (Any?, (any Error)?) in
            state.lastPath = request.path
            state.lastMethod = request.method
            state.lastQueryItems = sent.query
            state.lastHeaders = request.headers
            state.lastBody = sent.body
            state.count += 1
            return (state.response, state.error)
        }
        if let error { throw error }
        guard let typed = response as? Request.Response else {
            throw NoResponse(expected: String(describing: Request.Response.self))
        }
        return typed
    }
}
