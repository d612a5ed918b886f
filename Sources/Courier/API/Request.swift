import Foundation

/// A ready-made ``APIRequest`` for one-off calls, built with `get`, `post`, `put`, `patch` and
/// `delete`.
/// ```swift
/// let repos: [Repo] = try await client.perform(.get("/users/kean/repos"))
/// let created: Item = try await client.perform(.post("/items", json: NewItem(name: "x")))
/// ```
public struct Request<Value: Decodable & Sendable>: APIRequest {
    public typealias Response = Value

    public var method: HTTPMethod
    public var path: String
    public var queryItems: [URLQueryItem]?
    /// Fields sent after ``queryItems`` (``APIRequest/queryParameters``).
    public var queryParameters: (any Encodable & Sendable)?
    public var headers: [String: String]?
    public var body: Data?
    public var content: APIRequestBody?
    public var timeout: TimeInterval?
    /// The response content types accepted (``APIRequest/acceptableContentTypes``); `nil`
    /// defers to the configuration's.
    public var acceptableContentTypes: [String]?

    public init(
        method: HTTPMethod = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: [String: String] = [:],
        body: Data? = nil,
        content: APIRequestBody? = nil,
        timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.path = path
        self.queryItems = query
        self.headers = headers
        self.body = body
        self.content = content
        self.timeout = timeout
    }

    /// A GET request.
    public static func get(
        _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:]
    ) -> Request {
        Request(method: .get, path: path, query: query, headers: headers)
    }

    /// A GET request whose query is `query`'s fields, encoded by the configuration's
    /// ``APIConfiguration/formEncoder``.
    /// ```swift
    /// let hits: [Hit] = try await client.perform(.get("/search", query: Search(text: "a b")))
    /// ```
    public static func get(
        _ path: String, query: some Encodable & Sendable, headers: [String: String] = [:]
    ) -> Request {
        var request = Request(method: .get, path: path, headers: headers)
        request.queryParameters = query
        return request
    }

    /// A DELETE request.
    public static func delete(
        _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:]
    ) -> Request {
        Request(method: .delete, path: path, query: query, headers: headers)
    }

    /// A DELETE request whose query is `query`'s fields (as `get(_:query:)` does).
    public static func delete(
        _ path: String, query: some Encodable & Sendable, headers: [String: String] = [:]
    ) -> Request {
        var request = Request(method: .delete, path: path, headers: headers)
        request.queryParameters = query
        return request
    }

    /// A POST request with optional raw body bytes, sent exactly as given.
    public static func post(
        _ path: String, body: Data? = nil, query: [URLQueryItem] = [],
        headers: [String: String] = [:]
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, body: body)
    }

    /// A POST request with content the client encodes (JSON, form fields, typed bytes).
    public static func post(
        _ path: String, content: APIRequestBody, query: [URLQueryItem] = [],
        headers: [String: String] = [:]
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, content: content)
    }

    /// A POST request with `form`'s fields as an `application/x-www-form-urlencoded` body.
    public static func post(
        _ path: String, form: some Encodable & Sendable, query: [URLQueryItem] = [],
        headers: [String: String] = [:]
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, content: .form(form))
    }

    /// A POST request with a JSON body.
    public static func post(
        _ path: String, json: some Encodable & Sendable, headers: [String: String] = [:]
    ) -> Request {
        Request(method: .post, path: path, headers: headers, content: .json(json))
    }

    /// A PUT request with a JSON body.
    public static func put(
        _ path: String, json: some Encodable & Sendable, headers: [String: String] = [:]
    ) -> Request {
        Request(method: .put, path: path, headers: headers, content: .json(json))
    }

    /// A PATCH request with a JSON body.
    public static func patch(
        _ path: String, json: some Encodable & Sendable, headers: [String: String] = [:]
    ) -> Request {
        Request(method: .patch, path: path, headers: headers, content: .json(json))
    }
}
