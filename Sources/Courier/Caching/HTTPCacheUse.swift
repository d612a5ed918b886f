/// How one request wants ``CachingHTTPClient`` to use what it stored, written as the request's
/// own `Cache-Control` (RFC 9111 §5.2.1), which the cache honours and a server may ignore.
/// ```swift
/// var request = HTTPRequest(url: catalogURL)
/// request.setCacheUse(.storedOnly)   // offline: a stored response or a 504, nothing sent
/// ```
public enum HTTPCacheUse: Sendable, Hashable {
    /// The HTTP rules: a fresh stored response is used, a stale one revalidated.
    case standard
    /// A stored response however stale, else the network (`max-stale`).
    case storedElseLoad
    /// Only a stored response, however stale; nothing is sent, and 504 answers when nothing
    /// is stored (`only-if-cached, max-stale`).
    case storedOnly
    /// Always asks the server, revalidating a stored response (`no-cache`).
    case revalidate

    /// The `Cache-Control` value that says it, `nil` for ``standard``.
    var directives: String? {
        switch self {
        case .standard: nil
        case .storedElseLoad: "max-stale"
        case .storedOnly: "only-if-cached, max-stale"
        case .revalidate: "no-cache"
        }
    }
}

extension HTTPRequest {
    /// Sets how ``CachingHTTPClient`` answers this request, replacing its `Cache-Control`.
    public mutating func setCacheUse(_ use: HTTPCacheUse) {
        headers.remove("Cache-Control")
        if let directives = use.directives { headers.add("Cache-Control", directives) }
    }
}
