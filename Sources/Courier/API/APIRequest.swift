import Foundation

/// One endpoint of an API: where to send, what to send, and what comes back.
///
/// Only `path` and `Response` are required; the rest default to a GET with no query, headers
/// or body. The requirement names are the ones the layered-client articles use, so a request
/// written that way works as it is:
/// ```swift
/// struct ListUsersRequest: APIRequest {
///     typealias Response = Page<User>
///     let page: Int
///     var path: String { "/v1/users" }
///     var method: HTTPMethod { .get }
///     var headers: [String: String]? { ["X-Trace": "1"] }
///     var body: Data? { nil }
///     var queryItems: [URLQueryItem]? { [URLQueryItem(name: "page", value: String(page))] }
/// }
/// ```
/// For a body the client should encode, give `content` (`.json(value)`, `.form(value)`)
/// instead of `body`; a request that sets both is refused rather than sending one of them.
public protocol APIRequest: Sendable {
    /// What a successful response decodes into: any `Decodable`, `Data`, `String` or
    /// ``EmptyResponse``.
    associatedtype Response: Sendable

    var method: HTTPMethod { get }
    /// The path joined to the configuration's base URL, or an absolute `http(s)` URL.
    var path: String { get }
    /// Query items, percent-encoded by the client; order is kept.
    var queryItems: [URLQueryItem]? { get }
    /// A value whose fields are sent as query items after ``queryItems``, encoded by the
    /// configuration's ``APIConfiguration/formEncoder`` (`user[name]=ada&tags[]=a`); a value
    /// that does not encode throws ``APIError`` with `.invalidRequest` before anything is sent.
    var queryParameters: (any Encodable & Sendable)? { get }
    /// Headers sent with this request; they override same-named configuration headers.
    var headers: [String: String]? { get }
    /// The body bytes, sent exactly as they are.
    var body: Data? { get }
    /// A body for the client to encode, with its `Content-Type`; an alternative to `body`.
    var content: APIRequestBody? { get }
    /// A deadline for this request in seconds, overriding the configuration's.
    var timeout: TimeInterval? { get }
    /// Which statuses count as success; the default is any 2xx.
    func accepts(status: Int) -> Bool
    /// The response content types this request accepts, checked after the status and before
    /// decoding: `application/json`, `application/*`, `application/*+json`, `*/*`; parameters
    /// such as `charset` are ignored and case does not matter. A body of another type throws
    /// ``APIError`` with `.unacceptableContentType`. The default, `nil`, defers to
    /// ``APIConfiguration/acceptableContentTypes`` (which accepts anything unless set).
    var acceptableContentTypes: [String]? { get }
    /// Turns a successful response into `Response`.
    func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> Response
}

extension APIRequest {
    public var method: HTTPMethod { .get }
    public var queryItems: [URLQueryItem]? { nil }
    public var queryParameters: (any Encodable & Sendable)? { nil }
    public var headers: [String: String]? { nil }
    public var body: Data? { nil }
    public var content: APIRequestBody? { nil }
    public var timeout: TimeInterval? { nil }
    public func accepts(status: Int) -> Bool { (200..<300).contains(status) }
    public var acceptableContentTypes: [String]? { nil }
}

extension APIRequest where Response: Decodable {
    /// Decodes as the type says: `Data` is the body as it is, `String` the body as text in the
    /// `charset` of its `Content-Type` (UTF-8 when none is given),
    /// ``EmptyResponse`` ignores the body, an `Optional` of an empty body is `nil`, and every
    /// other type is decoded from JSON.
    public func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> Response {
        // Checked at run time: a generic `Request<Value>` picks this implementation once, for
        // every `Value`, so the `Data` and `String` overloads below never see it.
        if let raw = RawResponse.decode(response, as: Response.self) { return raw }
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
    /// Returns the body as text in the `charset` of its `Content-Type`, UTF-8 when none is
    /// given (invalid bytes are replaced; an unknown charset is read as UTF-8).
    public func decode(_ response: HTTPResponse, using decoder: JSONDecoder) throws -> String {
        ResponseText.decode(response)
    }
}

/// The response types that are not JSON.
enum RawResponse {
    static func decode<Value>(_ response: HTTPResponse, as type: Value.Type) -> Value? {
        switch type {
        case is Data.Type: response.body as? Value
        case is String.Type: ResponseText.decode(response) as? Value
        case is EmptyResponse.Type: EmptyResponse() as? Value
        default: nil
        }
    }
}

/// What an ``APIRequest`` sends as its `content`.
public enum APIRequestBody: Sendable {
    /// A value encoded with the configuration's `JSONEncoder`, sent as `application/json`.
    case json(any Encodable & Sendable)
    /// Raw bytes with their content type.
    case data(Data, contentType: String)
    /// Form fields, sent as `application/x-www-form-urlencoded`.
    case form([URLQueryItem])
    /// A value's fields, sent as `application/x-www-form-urlencoded`; made by
    /// ``form(_:encoder:)``.
    case encodedForm(any Encodable & Sendable, encoder: FormEncoder?)
    /// A `multipart/form-data` form; its file parts are streamed from disk.
    case multipart(MultipartFormData)
    /// The file at this URL, streamed, with its content type.
    case file(URL, contentType: String)

    /// A value's fields as an `application/x-www-form-urlencoded` body, encoded by `encoder`
    /// or else the configuration's ``APIConfiguration/formEncoder``.
    /// ```swift
    /// var content: APIRequestBody? { .form(Login(user: "ada", password: secret)) }
    /// ```
    public static func form(_ value: some Encodable & Sendable, encoder: FormEncoder? = nil)
        -> APIRequestBody
    {
        .encodedForm(value, encoder: encoder)
    }
}
