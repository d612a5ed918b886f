import Foundation

/// The caching rules of ``CachingHTTPClient`` as pure functions (a private cache after
/// RFC 9111, the parts an API client needs): what may be stored, for how long it is fresh, and
/// whether a stored response can be used, must be revalidated, or is no help.
public enum HTTPCachePolicy {
    /// What to do with a request, given what is stored.
    public enum Decision: Sendable, Hashable {
        /// The stored response is fresh: answer with it, send nothing.
        case useStored
        /// Ask the server whether the stored response still holds, with these validators
        /// (sent as `If-None-Match`, `If-Modified-Since`).
        case revalidate(HTTPValidators)
        /// Send the request as it is.
        case fetch
        /// The request asked for a stored response only (`only-if-cached`) and none will do:
        /// answer 504 without sending anything (RFC 9111 §5.2.1.7).
        case unsatisfiable
    }

    /// Fields of a 304 that describe the 304 itself, not the stored representation: they do
    /// not replace the stored ones.
    static let keptFromStored: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-type", "set-cookie",
    ]

    /// Statuses that may be stored (RFC 9110 §15.1's heuristically cacheable ones the client
    /// meets).
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 410]

    /// The cache key of a request, or `nil` when the request bypasses the cache: not a GET, a
    /// `Cache-Control: no-store`, its own conditional fields, or a body going to a file. A
    /// streamed body is answered from the cache but not stored (its bytes go to the reader). The
    /// credentials (`Authorization`, `Cookie`) are part of the key, so one user's response is
    /// never another's; the key is a SHA-256 digest and holds no secret.
    public static func key(for request: HTTPRequest) -> String? {
        guard request.method == .get,
            request.bodyDestination == .memory || request.bodyDestination.channel != nil,
            !directives(request.headers).keys.contains("no-store"),
            !request.headers.contains("If-None-Match"),
            !request.headers.contains("If-Modified-Since")
        else { return nil }
        var material = "GET \(request.url.absoluteString)"
        for name in ["Authorization", "Cookie"] {
            material += "\n\(name): " + request.headers.values(for: name).joined(separator: ", ")
        }
        return SHA256.hex(of: Array(material.utf8))
    }

    /// What to do for `request` given `stored` (already matched on `Vary`), at `now`.
    ///
    /// The request's own `Cache-Control` is honoured (RFC 9111 §5.2.1): `no-cache` revalidates,
    /// `max-age=N` wants a response at most N seconds old, `max-stale[=N]` accepts a stale one
    /// (any, or stale by at most N seconds) without asking the server, and `only-if-cached`
    /// never sends: a stored response the other directives accept, or ``Decision/unsatisfiable``.
    /// A stored response that says `no-cache` or `must-revalidate` is never used stale.
    public static func decide(
        _ request: HTTPRequest, stored: CachedResponse?, now: Date
    ) -> Decision {
        let asked = directives(request.headers)
        let offline = asked.keys.contains("only-if-cached")
        guard let stored else { return offline ? .unsatisfiable : .fetch }
        let given = directives(stored.headers)
        let mustCheck = asked.keys.contains("no-cache") || given.keys.contains("no-cache")
        let age = age(of: stored, now: now)
        let lifetime = freshnessLifetime(stored.headers) ?? 0
        let youngEnough = seconds(asked["max-age"]).map { age <= $0 } ?? true
        if !mustCheck, youngEnough, age < lifetime { return .useStored }
        if !mustCheck, youngEnough, !given.keys.contains("must-revalidate"),
            let maxStale = asked["max-stale"]
        {
            // "max-stale" alone accepts any staleness.
            let allowed = seconds(maxStale) ?? .infinity
            if age - lifetime <= allowed { return .useStored }
        }
        if offline { return .unsatisfiable }
        let validators = HTTPValidators(stored.headers)
        return validators.isEmpty ? .fetch : .revalidate(validators)
    }

    /// A directive's delta-seconds argument (`nil` when absent or not a number).
    private static func seconds(_ argument: String??) -> TimeInterval? {
        guard case .some(.some(let text)) = argument, let value = Int(text), value >= 0 else {
            return nil
        }
        return TimeInterval(value)
    }

    /// Whether `response` to `request` may be kept: a storable status, no `no-store`, no
    /// `Vary: *`, and something to go on later (a freshness lifetime or a validator).
    public static func isStorable(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
        guard key(for: request) != nil, storableStatuses.contains(response.status),
            response.savedBody == nil
        else { return false }
        let given = directives(response.headers)
        if given.keys.contains("no-store") { return false }
        if varyNames(response.headers).contains("*") { return false }
        return (freshnessLifetime(response.headers) ?? 0) > 0
            || !HTTPValidators(response.headers).isEmpty
    }

    /// Seconds a response stays fresh: `max-age`, else `Expires` minus `Date`; `nil` when
    /// neither says.
    public static func freshnessLifetime(_ headers: HTTPHeaders) -> TimeInterval? {
        if let maxAge = directives(headers)["max-age"].flatMap({ $0.flatMap(Int.init) }) {
            return TimeInterval(max(0, maxAge))
        }
        guard let expires = headers["Expires"] else { return nil }
        guard let expiry = CookieDate.parse(expires) else { return 0 }  // invalid: already stale
        let date = headers["Date"].flatMap(CookieDate.parse) ?? expiry
        return max(0, expiry.timeIntervalSince(date))
    }

    /// How old the stored response is: the `Age` it came with plus the time since it arrived.
    public static func age(of stored: CachedResponse, now: Date) -> TimeInterval {
        let given = stored.headers["Age"].flatMap { Double($0) } ?? 0
        return max(0, given) + max(0, now.timeIntervalSince(stored.storedAt))
    }

    /// The lowercased field names a response's `Vary` lists.
    public static func varyNames(_ headers: HTTPHeaders) -> [String] {
        headers.values(for: "Vary").flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }.filter { !$0.isEmpty }
    }

    /// The request's values of the fields `names`, digested, for ``CachedResponse/varying``.
    public static func varying(_ request: HTTPRequest, names: [String]) -> [String: String] {
        Dictionary(
            names.map { name in
                let value = request.headers.values(for: name).joined(separator: ", ")
                return (name, value.isEmpty ? "" : SHA256.hex(of: Array(value.utf8)))
            }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `stored` answers `request`, field by field of its `Vary`.
    public static func matchesVary(_ stored: CachedResponse, _ request: HTTPRequest) -> Bool {
        varying(request, names: Array(stored.varying.keys)) == stored.varying
    }

    /// `Cache-Control` directives: lowercased name → argument (quotes removed), if any.
    static func directives(_ headers: HTTPHeaders) -> [String: String?] {
        var result: [String: String?] = [:]
        for value in headers.values(for: "Cache-Control") {
            for part in value.split(separator: ",") {
                let pieces = part.split(separator: "=", maxSplits: 1)
                let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
                guard !name.isEmpty else { continue }
                let argument =
                    pieces.count > 1
                    ? pieces[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                        in: CharacterSet(charactersIn: "\"")) : nil
                result[name] = argument
            }
        }
        return result
    }
}
