/// What identifies one version of a resource (RFC 9110 §8.8): its `ETag` and `Last-Modified`,
/// and the conditional fields that ask the server whether that version still holds.
///
/// The one place both conditional mechanisms take them from: ``CachingHTTPClient`` revalidating
/// a stored response, and the job runner's `conditional` tasks revalidating a saved file.
public struct HTTPValidators: Sendable, Hashable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators a response's header fields carry.
    public init(_ headers: HTTPHeaders) {
        self.init(etag: headers["ETag"], lastModified: headers["Last-Modified"])
    }

    /// Whether there is nothing to revalidate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }

    /// Adds `If-None-Match` and `If-Modified-Since` for these validators to `request`, leaving
    /// any the request already sets (the caller's own condition wins).
    public func addConditions(to request: inout HTTPRequest) {
        if let etag, !request.headers.contains("If-None-Match") {
            request.headers.add("If-None-Match", etag)
        }
        if let lastModified, !request.headers.contains("If-Modified-Since") {
            request.headers.add("If-Modified-Since", lastModified)
        }
    }
}
