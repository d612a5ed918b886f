/// Sends ``APIRequest``s and returns their typed responses.
///
/// The one requirement is `perform`, so a test double is a few lines (see `CourierTesting`,
/// or write your own as the layered-client articles do).
public protocol APIClient: Sendable {
    /// Sends the request and returns the decoded response.
    func perform<Request: APIRequest>(_ request: Request) async throws -> Request.Response
}

extension APIClient {
    /// Sends a ``Request``; lets `client.perform(.get("/path"))` infer the response type.
    public func perform<Value>(_ request: Courier.Request<Value>) async throws -> Value {
        let generic: Courier.Request<Value> = request
        return try await performGeneric(generic)
    }

    private func performGeneric<Endpoint: APIRequest>(_ request: Endpoint) async throws
        -> Endpoint.Response
    {
        try await perform(request)
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
