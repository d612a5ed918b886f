import Foundation

/// The matching rules of RFC 6265 section 5.1, as pure functions.
enum CookieRules {
    /// Section 5.1.3: `host` is `domain` or a subdomain of it, and is not an IP address.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        return host.hasSuffix("." + domain) && !isIPAddress(host)
    }

    /// Section 5.1.4: the cookie path is the request path or a folder prefix of it.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// Section 5.1.4: the default path is the request path up to, not including, its last `/`.
    static func defaultPath(_ url: URL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex
        else { return "/" }
        return String(path[..<slash])
    }

    /// The URL's path as sent (percent-encoded), `/` when empty.
    static func requestPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }  // IPv6 literals are the only hosts with colons
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }

    /// Courier knows no public suffix list; it treats a single label ("com", "localhost") as
    /// one, so a server cannot set a cookie for a whole top-level domain.
    static func isPublicSuffix(_ domain: String) -> Bool { !domain.contains(".") }
}
