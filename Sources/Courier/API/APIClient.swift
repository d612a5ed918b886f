/// Sends ``APIRequest``s and returns their typed responses.
public protocol APIClient: Sendable {
    /// Sends the request and returns the decoded value together with the HTTP response.
    func send<Endpoint: APIRequest>(_ request: Endpoint) async throws -> APIResponse<
        Endpoint.Response
    >
}

extension APIClient {
    /// Sends the request and returns the decoded value.
    public func perform<Endpoint: APIRequest>(_ request: Endpoint) async throws
        -> Endpoint.Response
    {
        try await send(request).value
    }

    /// Sends a ``Request``; lets `client.perform(.get("/path"))` infer the response type.
    public func perform<Value>(_ request: Request<Value>) async throws -> Value {
        try await send(request).value
    }
}

/// A decoded value with the response it came from (for headers such as pagination links).
public struct APIResponse<Value: Sendable>: Sendable {
    public var value: Value
    public var response: HTTPResponse

    public init(value: Value, response: HTTPResponse) {
        self.value = value
        self.response = response
    }
}
