import Foundation

/// Joins base URLs and paths and encodes query items, the one place these rules live.
public enum URLBuilder {
    /// Joins `path` onto `baseURL`, or returns `path` itself when it is an absolute URL.
    ///
    /// `https://api.example.com/v1` and `https://api.example.com/v1/` both join `users` and
    /// `/users` to `https://api.example.com/v1/users`; a query on the base is kept, before
    /// what the path's own query and `query` add.
    public static func url(
        baseURL: URL?, path: String, query: [URLQueryItem] = []
    ) throws(APIError) -> URL {
        if let absolute = try absoluteURL(path) { return appending(query, to: absolute) }
        guard let baseURL, let base = Base(baseURL) else {
            throw APIError(.invalidRequest, "no base URL to join '\(path)' to")
        }
        return try url(base: base, path: path, query: query)
    }

    /// A base URL taken apart once, for building many URLs against it.
    public struct Base: Sendable {
        let origin: String
        let basePathFull: String
        let basePath: String
        let query: String?

        /// `nil` when `url` has no scheme or host.
        public init?(_ url: URL) {
            guard url.scheme != nil, url.host != nil else { return nil }
            var text = Substring(url.absoluteString)
            if let fragment = text.firstIndex(of: "#") { text = text[..<fragment] }
            var query: String?
            if let mark = text.firstIndex(of: "?") {
                query = String(text[text.index(after: mark)...])
                text = text[..<mark]
            }
            // scheme://authority[/path]: the path starts at the first "/" after "//".
            let bytes = Array(text.utf8)
            var authorityStart = 0
            if let slashes = (0..<max(0, bytes.count - 1)).first(where: {
                bytes[$0] == UInt8(ascii: "/") && bytes[$0 + 1] == UInt8(ascii: "/")
            }) {
                authorityStart = slashes + 2
            }
            let pathStart =
                bytes[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
            origin = String(decoding: bytes[..<pathStart], as: UTF8.self)
            basePathFull = String(decoding: bytes[pathStart...], as: UTF8.self)
            basePath = basePathFull.hasSuffix("/") ? String(basePathFull.dropLast()) : basePathFull
            self.query = query
        }
    }

    /// ``url(baseURL:path:query:)`` against a base taken apart once.
    public static func url(base: Base, path: String, query: [URLQueryItem] = []) throws(APIError)
        -> URL
    {
        if let absolute = try absoluteURL(path) { return appending(query, to: absolute) }
        let origin = base.origin
        let basePathFull = base.basePathFull
        let basePath = base.basePath
        let baseQuery = base.query
        // A query written into the path ("/search?page=2") is kept as the URL's query.
        let mark = path.utf8.firstIndex(of: UInt8(ascii: "?"))
        let relative = encodePath(mark.map { String(path[..<$0]) } ?? path)
        var text = origin
        if relative.isEmpty {
            text += basePath.isEmpty ? "/" : basePathFull
        } else {
            text += basePath + (relative.hasPrefix("/") ? "" : "/") + relative
        }
        // The base's own query (an API key in `https://api.test/v1?key=K`) stays, whatever
        // the path adds: a path with a query of its own dropped it (trial III).
        let pathQuery = mark.map { encodeQueryText(String(path[path.utf8.index(after: $0)...])) }
        var queryText: String? =
            baseQuery == nil && pathQuery == nil
            ? nil
            : [baseQuery, pathQuery].compactMap { $0 }.filter { !$0.isEmpty }.joined(
                separator: "&")
        if !query.isEmpty {
            let encoded = encodeQuery(query)
            queryText = (queryText?.isEmpty ?? true) ? encoded : queryText! + "&" + encoded
        }
        if let queryText { text += "?" + queryText }
        // The text starts with the base's scheme and host, and the path follows a "/", so
        // the URL has the base's host whenever it parses.
        guard let url = URL(string: text) else {
            throw APIError(.invalidRequest, "'\(path)' does not make a valid URL with the base URL")
        }
        return url
    }

    /// `path` as an absolute URL when it starts with a scheme, `nil` for a relative path.
    ///
    /// A reference that starts with `scheme:` is absolute (RFC 3986 §4.2: a relative path's
    /// first segment holds no colon), so it is never joined to the base URL: one that does
    /// not parse, has no host, or is not http(s) is refused here, before the API's
    /// credentials could go with it to the API's host.
    static func absoluteURL(_ path: String) throws(APIError) -> URL? {
        guard let scheme = scheme(of: path) else { return nil }
        let lowered = scheme.lowercased()
        guard lowered == "http" || lowered == "https" else {
            throw APIError(
                .invalidURL,
                "'\(scheme):…' is an absolute URL and only http and https URLs can be sent"
                    + " (write a path whose first segment holds a colon as '/\(scheme):…')"
            )
        }
        guard let url = URL(string: path), url.host?.isEmpty == false else {
            throw APIError(
                .invalidURL, "'\(withoutUserinfo(path))' is not a valid absolute URL")
        }
        return url
    }

    /// The scheme `path` starts with: a letter, then letters, digits, `+`, `-` or `.`, then
    /// `:` (RFC 3986 §3.1).
    static func scheme(of path: String) -> Substring? {
        var index = path.utf8.startIndex
        guard index < path.utf8.endIndex, isLetter(path.utf8[index]) else { return nil }
        while index < path.utf8.endIndex {
            let byte = path.utf8[index]
            if byte == UInt8(ascii: ":") { return path[..<index] }
            guard
                isLetter(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            else { return nil }
            index = path.utf8.index(after: index)
        }
        return nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }

    /// The text with anything between `//` and an `@` taken out, for messages about a URL
    /// that did not parse (its userinfo may hold a password).
    private static func withoutUserinfo(_ text: String) -> String {
        guard let slashes = text.range(of: "//"),
            let at = text[slashes.upperBound...].firstIndex(of: "@"),
            !text[slashes.upperBound..<at].contains("/")
        else { return text }
        return String(text[..<slashes.upperBound]) + String(text[text.index(after: at)...])
    }

    /// Appends query items to the URL's query, encoding each name and value.
    public static func appending(_ items: [URLQueryItem], to url: URL) -> URL {
        guard !items.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        let encoded = encodeQuery(items)
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + encoded
        } else {
            components.percentEncodedQuery = encoded
        }
        return components.url ?? url
    }

    /// `name=value&…` with everything but RFC 3986 unreserved characters percent-encoded, so
    /// `+`, `&`, `=` and spaces survive as data.
    public static func encodeQuery(_ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = percentEncode(item.name)
            guard let value = item.value else { return name }
            return name + "=" + percentEncode(value)
        }.joined(separator: "&")
    }

    /// Percent-encodes every byte outside `A-Z a-z 0-9 - . _ ~`.
    public static func percentEncode(_ text: String) -> String {
        PercentEncoding.unreserved(text)
    }

    /// Encodes what may not stand in a query, leaving `&`, `=` and existing escapes alone.
    static func encodeQueryText(_ query: String) -> String { PercentEncoding.queryText(query) }

    /// Encodes what may not stand in a path, leaving `/` and existing `%XX` escapes alone.
    static func encodePath(_ path: String) -> String { PercentEncoding.path(path) }
}
