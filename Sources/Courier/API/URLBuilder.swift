import Foundation

/// Joins base URLs and paths and encodes query items, the one place these rules live.
public enum URLBuilder {
    /// Joins `path` onto `baseURL`, or returns `path` itself when it is an absolute URL.
    ///
    /// `https://api.example.com/v1` and `https://api.example.com/v1/` both join `users` and
    /// `/users` to `https://api.example.com/v1/users`; a query on the base is kept.
    public static func url(
        baseURL: URL?, path: String, query: [URLQueryItem] = []
    ) throws(APIError) -> URL {
        if let absolute = URL(string: path), let scheme = absolute.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        {
            return appending(query, to: absolute)
        }
        guard let baseURL,
            var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        else {
            throw APIError(.invalidRequest, "no base URL to join '\(path)' to")
        }
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        // A query written into the path ("/search?page=2") is kept as the URL's query.
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let relative = encodePath(String(parts[0]))
        if parts.count == 2 { components.percentEncodedQuery = encodeQueryText(String(parts[1])) }
        if relative.isEmpty {
            components.percentEncodedPath = basePath.isEmpty ? "/" : components.percentEncodedPath
        } else {
            components.percentEncodedPath =
                basePath + (relative.hasPrefix("/") ? "" : "/") + relative
        }
        guard let url = components.url, url.host != nil else {
            throw APIError(.invalidRequest, "'\(path)' does not make a valid URL with the base URL")
        }
        return appending(query, to: url)
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
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Encodes what may not stand in a query, leaving `&`, `=` and existing escapes alone.
    static func encodeQueryText(_ query: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.insert("%")
        allowed.remove(charactersIn: "#")
        return escapingStrayPercents(
            query.addingPercentEncoding(withAllowedCharacters: allowed) ?? query)
    }

    /// Encodes what may not stand in a path, leaving `/` and existing `%XX` escapes alone.
    static func encodePath(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.insert("%")
        allowed.remove(charactersIn: "?#")
        return escapingStrayPercents(
            path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path)
    }

    /// `%` that does not start a `%XX` escape becomes `%25`: `/sale/50%` is the path
    /// `/sale/50%25`, while `/a%20b` keeps its escape. (URLComponents traps on a bare `%`.)
    static func escapingStrayPercents(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return text }
        func isHex(_ index: Int) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            return (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 8)
        for (index, byte) in bytes.enumerated() {
            output.append(byte)
            if byte == UInt8(ascii: "%"), !(isHex(index + 1) && isHex(index + 2)) {
                output.append(contentsOf: Array("25".utf8))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
