import Courier
import Foundation

/// An ``HTTPClient`` for unit tests: answers by method and path with canned responses, a
/// closure or a transport failure, and records every request it was given.
///
/// ```swift
/// let stub = StubHTTPClient()
/// stub.respond(.get, "/v1/users/42", status: 200, json: #"{"id": "42", "name": "Ada"}"#)
/// stub.fail(.post, "/v1/users", with: .timeout)
/// let client = DefaultAPIClient(httpClient: stub, configuration: configuration)
/// ```
/// A request no route matches throws ``StubHTTPClient/Unmatched``, naming it, so a test never
/// passes on an answer nobody wrote. The path `"*"` matches every path.
public final class StubHTTPClient: HTTPClient, Sendable {
    /// No route matched the request.
    public struct Unmatched: Error, CustomStringConvertible, LocalizedError {
        /// The ``description``, for a test failure that shows `localizedDescription`.
        public var errorDescription: String? { description }
        public let request: HTTPRequest
        public var description: String {
            "StubHTTPClient: no route for \(request.method) \(request.url.path)"
        }
    }

    private struct Route: Sendable {
        let method: HTTPMethod?
        let path: String
        let answer: @Sendable (HTTPRequest) throws -> HTTPResponse
    }

    private let state = Locked<(routes: [Route], requests: [HTTPRequest])>(([], []))

    public init() {}

    /// A stub that answers every request with this status, body and headers.
    public convenience init(status: Int = 200, body: String, headers: HTTPHeaders = [:]) {
        self.init()
        respond("*", status: status, headers: headers, body: Data(body.utf8))
    }

    /// Every request performed so far, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// The last request performed.
    public var lastRequest: HTTPRequest? { state.withLock { $0.requests.last } }

    /// Answers `method` requests to `path` with `answer`. Later routes win.
    public func route(
        _ method: HTTPMethod, _ path: String,
        answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(Route(method: method, path: path, answer: answer))
    }

    /// Answers requests to `path`, any method, with `answer`. Later routes win.
    public func route(
        _ path: String, answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        add(Route(method: nil, path: path, answer: answer))
    }

    /// Answers `method` requests to `path` with a fixed status, headers and body.
    public func respond(
        _ method: HTTPMethod, _ path: String, status: Int = 200, headers: HTTPHeaders = [:],
        body: Data = Data()
    ) {
        add(Route(method: method, path: path, answer: Self.fixed(status, headers, body)))
    }

    /// Answers requests to `path`, any method, with a fixed status, headers and body.
    public func respond(
        _ path: String, status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data()
    ) {
        add(Route(method: nil, path: path, answer: Self.fixed(status, headers, body)))
    }

    /// Answers `method` requests to `path` with JSON text and `Content-Type: application/json`.
    public func respond(_ method: HTTPMethod, _ path: String, status: Int = 200, json: String) {
        respond(
            method, path, status: status, headers: ["Content-Type": "application/json"],
            body: Data(json.utf8))
    }

    /// Fails `method` requests to `path` like a transport would: `.timeout`, `.connect`, …
    public func fail(_ method: HTTPMethod, _ path: String, with kind: HTTPError.Kind) {
        route(method, path) { request in
            throw HTTPError(kind, "stubbed \(kind.rawValue)", url: request.displayURL)
        }
    }

    private func add(_ route: Route) {
        state.withLock { $0.routes.insert(route, at: 0) }
    }

    private static func fixed(_ status: Int, _ headers: HTTPHeaders, _ body: Data)
        -> @Sendable (HTTPRequest) -> HTTPResponse
    {
        { request in
            HTTPResponse(
                status: status, headers: headers, body: body, url: request.url,
                requestHeaders: request.headers)
        }
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let route = state.withLock { state -> Route? in
            state.requests.append(request)
            return state.routes.first { route in
                (route.path == "*" || route.path == request.url.path)
                    && (route.method.map { $0 == request.method } ?? true)
            }
        }
        guard let route else { throw Unmatched(request: request) }
        return try route.answer(request).redacting(secretsOf: request)
    }
}
