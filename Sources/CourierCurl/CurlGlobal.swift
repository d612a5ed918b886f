import CCurl

/// `curl_global_init` must run once per process before any other libcurl call, and is not
/// safe to race; a static `let` is initialised exactly once, under a lock, by the runtime.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// Whether the linked libcurl can speak HTTP/2.
    static let supportsHTTP2: Bool = ccurl_supports_http2() != 0
}
