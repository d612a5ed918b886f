import Foundation

/// One stored cookie, as RFC 6265 section 5.3 keeps it.
public struct Cookie: Sendable, Hashable {
    public var name: String
    public var value: String
    /// The host (host-only) or the domain the cookie applies to, lowercased, without a leading dot.
    public var domain: String
    /// Sent only to exactly `domain`, not to its subdomains (no `Domain` attribute was given).
    public var hostOnly: Bool
    public var path: String
    /// Sent only over https.
    public var secure: Bool
    public var httpOnly: Bool
    /// When the cookie stops being sent; `nil` for a session cookie (kept while the jar lives).
    public var expires: Date?
    /// When it was first stored, which orders cookies of equal path length.
    public var created: Date

    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/",
        secure: Bool = false, httpOnly: Bool = false, expires: Date? = nil,
        created: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.expires = expires
        self.created = created
    }

    /// Whether the cookie has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// Whether this cookie goes with a request to `url` at `now` (RFC 6265 section 5.4).
    public func matches(_ url: URL, at now: Date) -> Bool {
        guard let host = url.host?.lowercased(), !isExpired(at: now) else { return false }
        if secure, url.scheme?.lowercased() != "https" { return false }
        let domainOK = hostOnly ? host == domain : CookieRules.domainMatches(host, domain)
        return domainOK && CookieRules.pathMatches(CookieRules.requestPath(url), path)
    }
}
