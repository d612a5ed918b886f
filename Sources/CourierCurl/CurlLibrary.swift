import CCurl

/// What the libcurl this process linked can do, from `curl_version_info`: the transport's
/// HTTP/2, content decoding and TLS depend on how the system's libcurl was built, so
/// `courier --version` says.
package struct CurlLibrary: Sendable {
    /// `7.88.1`.
    package let version: String
    /// The TLS library and its version (`OpenSSL/3.0.19`), if any.
    package let ssl: String?
    /// The versions of the libraries libcurl was built with (`libz`, `brotli`, `zstd`,
    /// `nghttp2`), in that order, those it lacks left out.
    package let libraries: [(name: String, version: String)]
    /// The features the transport uses, by curl's names (`HTTP2`, `brotli`…), and whether
    /// this libcurl has each.
    package let features: [(name: String, present: Bool)]

    /// The libcurl linked into this process.
    package static let linked = CurlLibrary()

    private init() {
        _ = CurlGlobal.initialized
        // CURLVERSION_NOW, a macro Swift does not import, is the case before CURLVERSION_LAST.
        let now = CURLversion(rawValue: CURLVERSION_LAST.rawValue - 1)
        let info = curl_version_info(now).pointee
        func text(_ pointer: UnsafePointer<CChar>?) -> String? {
            pointer.map { String(cString: $0) }
        }
        version = text(info.version) ?? "unknown"
        ssl = text(info.ssl_version)
        var libraries: [(String, String)] = []
        if let libz = text(info.libz_version) { libraries.append(("libz", libz)) }
        // Each field exists from the struct's `age` that added it (curl.h).
        if info.age.rawValue >= CURLVERSION_FIFTH.rawValue, let brotli = text(info.brotli_version) {
            libraries.append(("brotli", brotli))
        }
        if info.age.rawValue >= CURLVERSION_EIGHTH.rawValue, let zstd = text(info.zstd_version) {
            libraries.append(("zstd", zstd))
        }
        if info.age.rawValue >= CURLVERSION_SIXTH.rawValue,
            let nghttp2 = text(info.nghttp2_version)
        {
            libraries.append(("nghttp2", nghttp2))
        }
        self.libraries = libraries
        let bits = Int(info.features)
        let known: [(String, Int32)] = [
            ("HTTP2", CURL_VERSION_HTTP2), ("HTTP3", CURL_VERSION_HTTP3),
            ("SSL", CURL_VERSION_SSL), ("libz", CURL_VERSION_LIBZ),
            ("brotli", CURL_VERSION_BROTLI), ("zstd", CURL_VERSION_ZSTD),
            ("IPv6", CURL_VERSION_IPV6), ("AsynchDNS", CURL_VERSION_ASYNCHDNS),
            ("Largefile", CURL_VERSION_LARGEFILE), ("threadsafe", CURL_VERSION_THREADSAFE),
        ]
        features = known.map { ($0.0, bits & Int($0.1) != 0) }
    }

    /// `libcurl 7.88.1 (OpenSSL/3.0.19, libz/1.2.13, brotli/1.0.9, zstd/1.5.4, nghttp2/1.52.0)`
    /// and a line of features: those it has, then those it lacks.
    package var description: [String] {
        let parts = (ssl.map { [$0] } ?? []) + libraries.map { "\($0.name)/\($0.version)" }
        let has = features.filter(\.present).map(\.name)
        let lacks = features.filter { !$0.present }.map(\.name)
        var featureLine = "libcurl features: " + (has.isEmpty ? "none" : has.joined(separator: " "))
        if !lacks.isEmpty { featureLine += "; without: " + lacks.joined(separator: " ") }
        return [
            "libcurl \(version)" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"),
            featureLine,
        ]
    }
}
