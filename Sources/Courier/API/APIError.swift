import Foundation

/// A failure above the transport: a request that could not be built, an unacceptable status,
/// or a body that did not decode. Transport failures stay ``HTTPError``s.
public struct APIError: Error, Sendable, CustomStringConvertible {
    /// What class of failure this is.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The URL or body could not be built.
        public static let invalidRequest = Kind(rawValue: "invalidRequest")
        /// The request's `path` is an absolute URL that does not parse, has no host, or is
        /// not http(s): it is refused, never sent to the API's host as a path.
        public static let invalidURL = Kind(rawValue: "invalidURL")
        /// The server answered with a status the request does not accept.
        public static let unacceptableStatus = Kind(rawValue: "unacceptableStatus")
        /// The body did not decode into the response type.
        public static let decoding = Kind(rawValue: "decoding")
        /// The response's `Content-Type` is not one the request accepts
        /// (``APIRequest/acceptableContentTypes``, ``APIConfiguration/acceptableContentTypes``).
        public static let unacceptableContentType = Kind(rawValue: "unacceptableContentType")

        public var description: String { rawValue }
    }

    public var kind: Kind
    public var message: String
    /// The method and URL of the request, when it got that far.
    public var request: (method: HTTPMethod, url: URL)?
    /// The response, for `.unacceptableStatus`, `.unacceptableContentType` and `.decoding`.
    public var response: HTTPResponse?

    public init(
        _ kind: Kind, _ message: String, request: (method: HTTPMethod, url: URL)? = nil,
        response: HTTPResponse? = nil
    ) {
        self.kind = kind
        self.message = message
        self.request = request.map { ($0.method, HTTPError.withoutCredentials($0.url)) }
        self.response = response
    }

    /// An error about `request`, showing its URL without credentials or secret query values.
    public init(
        _ kind: Kind, _ message: String, request: HTTPRequest, response: HTTPResponse? = nil
    ) {
        self.init(kind, message, request: (request.method, request.displayURL), response: response)
    }

    /// `response`'s status, which `request` does not accept, with the start of its body: the
    /// server's own word on what went wrong (trial VVV: "unacceptable status 403" said
    /// nothing of Kinto's reason). Secrets the request carried are redacted in it.
    init(unacceptable response: HTTPResponse, of request: HTTPRequest) {
        var message = "unacceptable status \(response.status)"
        if !response.body.isEmpty {
            let head = ContentTypeValidation.firstBytes(of: response, limit: 200)
            message += " (first bytes: \(head))"
        }
        self.init(.unacceptableStatus, message, request: request, response: response)
    }

    /// The response status, when there was a response.
    public var status: Int? { response?.status }
    /// The response body, when there was a response.
    public var body: Data? { response?.body }
    /// The response's `Content-Type` as the server sent it, when there was one.
    public var contentType: String? { response?.headers["Content-Type"] }

    /// Decodes the server's error body, for APIs that describe failures in JSON.
    /// ```swift
    /// catch let error as APIError {
    ///     let problem = try error.decodeBody(as: Problem.self)
    /// }
    /// ```
    public func decodeBody<Body: Decodable>(
        as type: Body.Type, using decoder: JSONDecoder = JSONDecoder()
    ) throws -> Body {
        try decoder.decode(type, from: body ?? Data())
    }

    public var description: String {
        var text = "\(kind): \(message)"
        if let request { text += " (\(request.method) \(request.url.absoluteString))" }
        return text
    }
}

extension APIError: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
