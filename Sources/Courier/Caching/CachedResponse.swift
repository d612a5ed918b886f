import Foundation

/// A response kept by ``CachingHTTPClient``: what the server sent, when it arrived, and the
/// request fields it varies on.
///
/// It holds no secret: `Set-Cookie` is never kept, and the request fields named by `Vary` are
/// kept as SHA-256 digests, so an on-disk store writes no credential.
public struct CachedResponse: Sendable, Hashable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data
    /// When the response (or its last revalidation) arrived, by the cache's clock.
    public var storedAt: Date
    /// Lowercased request field name → SHA-256 hex of its value ("" when absent), for each
    /// field the response's `Vary` names.
    public var varying: [String: String]

    public init(
        status: Int, headers: HTTPHeaders, body: Data, storedAt: Date,
        varying: [String: String] = [:]
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.storedAt = storedAt
        self.varying = varying
    }

    /// The response as the cache hands it back for a request to `url` (the URL is part of the
    /// key, and is not stored: it may carry a secret query value).
    public func response(for url: URL) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: body, url: url)
    }
}
