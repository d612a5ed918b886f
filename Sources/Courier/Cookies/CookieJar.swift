import Foundation

/// The cookies of one client, as a pure value: store what responses set, and say what a request
/// sends (RFC 6265 sections 5.3 and 5.4). Bounded: past `capacity` cookies, those expiring
/// soonest (session cookies last) are evicted first.
public struct CookieJar: Sendable {
    public private(set) var cookies: [Cookie] = []
    public let capacity: Int

    public init(capacity: Int = 3000) { self.capacity = capacity }

    /// Stores the cookies of a response's `Set-Cookie` fields.
    public mutating func store(setCookie fields: [String], from url: URL, at now: Date) {
        for value in SetCookie.values(fields) {
            guard let cookie = SetCookie.parse(value, from: url, at: now) else { continue }
            store(cookie, at: now)
        }
    }

    /// Stores one cookie, replacing the one with its name, domain and path; an expired cookie
    /// only removes.
    public mutating func store(_ cookie: Cookie, at now: Date) {
        var cookie = cookie
        if let index = cookies.firstIndex(where: {
            $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path
        }) {
            cookie.created = cookies[index].created
            cookies.remove(at: index)
        }
        guard !cookie.isExpired(at: now) else { return }
        cookies.append(cookie)
        if cookies.count > capacity {
            cookies.removeAll { $0.isExpired(at: now) }
        }
        if cookies.count > capacity,
            let soonest = cookies.indices.min(by: {
                (cookies[$0].expires ?? .distantFuture) < (cookies[$1].expires ?? .distantFuture)
            })
        {
            cookies.remove(at: soonest)
        }
    }

    /// The `Cookie` field value for a request to `url` at `now`, or `nil` when none match.
    /// Longer paths come first, then older cookies, as section 5.4 orders them.
    public func header(for url: URL, at now: Date) -> String? {
        let matching = cookies.filter { $0.matches(url, at: now) }.sorted {
            $0.path.count != $1.path.count ? $0.path.count > $1.path.count : $0.created < $1.created
        }
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
