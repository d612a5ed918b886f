import Foundation

/// One endpoint of an API: where to send, what to send, and what comes back.
///
/// Only `path` and `Response` are required; the rest default to a GET with no query, headers
/// or body.
/// ```swift
/// struct GetUser: APIRequest {
///     typealias Response = User
///     let id: String
///     var path: String { "/users/\(id)" }
/// }
/// ```
public protocol APIRequest: Sendable {
    /// What a successful response decodes into: any `Decodable`, `Data`, `String` or
    /// ``EmptyResponse``.
    associatedtype Response: Sendable

    var method: HTTPMethod { get }
    /// The path joined to the configuration's base URL, or an absolute `http(s)` URL.
    var path: String { get }
    /// Query items, percent-encoded by the client; order is kept.
    var query: [URLQueryItem] { get }
    /// Headers sent with this request; they override same-named configuration headers.
    var headers: HTTPHeaders { get }
    var body: APIRequestBody? { get }
    /// A deadline for this request in seconds, overriding the configuration's.
    var timeout: TimeInterval? { get }
    /// Which statuses count as success; the default is any 2xx.
    func accepts(status: Int) -> Bool
    /// Turns a successful response into `Response`.
    func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> Response
}

extension APIRequest {
    public var method: HTTPMethod { .get }
    public var query: [URLQueryItem] { [] }
    public var headers: HTTPHeaders { [:] }
    public var body: APIRequestBody? { nil }
    public var timeout: TimeInterval? { nil }
    public func accepts(status: Int) -> Bool { (200..<300).contains(status) }
}

extension APIRequest where Response: Decodable {
    /// Decodes JSON; an empty body decodes into ``EmptyResponse`` or an `Optional` as `nil`.
    public func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> Response {
        if response.body.isEmpty, let empty = (Response.self as? any EmptyDecodable.Type)?.empty {
            return empty as! Response  // swift-format-ignore: checked by the cast above
        }
        return try decoder.decode(Response.self, from: response.body)
    }
}

extension APIRequest where Response == Data {
    /// Returns the body bytes as they are.
    public func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> Data {
        response.body
    }
}

extension APIRequest where Response == String {
    /// Returns the body as UTF-8 text (invalid bytes are replaced).
    public func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> String {
        String(decoding: response.body, as: UTF8.self)
    }
}

/// What an ``APIRequest`` sends as its body.
public enum APIRequestBody: Sendable {
    /// A value encoded with the configuration's `JSONEncoder`, sent as `application/json`.
    case json(any Encodable & Sendable)
    /// Raw bytes with their content type.
    case data(Data, contentType: String)
    /// Form fields, sent as `application/x-www-form-urlencoded`.
    case form([URLQueryItem])
}
