import Foundation

/// The redirect decisions for one request chain, as a pure value: feed it each response and it
/// says which request to send next, or that the chain is finished.
///
/// Rules: at most `maxHops` redirects; a request seen before (same method and URL) is a loop;
/// only http and https; 301/302 turn POST into GET and 303 turns anything but HEAD into GET,
/// dropping the body; 307/308 keep method and body; on any change of scheme, host or port from
/// one request sent to the next the credentials (`Authorization`, `Proxy-Authorization`,
/// `Cookie` and every header marked secret) are dropped and stay dropped for the rest of the
/// chain, and a body marked secret (``HTTPRequest/bodyIsSecret``) that a 307/308 would carry
/// there is refused.
///
/// A hop is a ``proposal(after:)`` and its ``take(_:proposed:)``; between them a caller (a
/// ``RedirectingHTTPClient/Handler``) may change the request. The rules then judge the
/// request as changed, since it is the one sent: its URL is the one the next relative
/// `Location` resolves against, the one loops are told by, and the one whose origin decides
/// the credentials.
public struct RedirectState: Sendable {
    public let maxHops: Int
    /// The request the next hop is based on.
    public private(set) var current: HTTPRequest
    /// Redirects followed so far.
    public private(set) var hops = 0
    /// The requests of the chain so far, once it has a redirect: most chains have none, and
    /// they need no set.
    private var visited: Set<String> = []

    public init(request: HTTPRequest, maxHops: Int) {
        self.maxHops = maxHops
        self.current = request
    }

    /// Where a redirect response points, or `nil` when the response is not one to follow.
    package static func location(of response: HTTPResponse) -> String? {
        response.isRedirect ? response.headers["Location"] : nil
    }

    /// Returns the request for the next hop, or `nil` when `response` is not a redirect to follow:
    /// ``proposal(after:)`` taken as it is (``take(_:proposed:)``).
    ///
    /// Throws ``HTTPError`` with `.tooManyRedirects` for a loop or too many hops,
    /// `.invalidURL` for a `Location` that is unusable or not http/https, and `.invalidRequest`
    /// for a secret body a 307/308 would carry to another origin.
    /// The error carries `response`'s status (``HTTPError/status``): what the server answered.
    public mutating func next(after response: HTTPResponse) throws -> HTTPRequest? {
        do {
            guard let proposed = try proposal(after: response) else { return nil }
            return try take(proposed, proposed: proposed)
        } catch var error as HTTPError {
            if error.status == nil { error.status = response.status }
            throw error
        }
    }

    /// The request the rules make of `response` for the next hop, without taking it, or `nil`
    /// when `response` is not a redirect to follow: the `Location` resolved against
    /// ``current``'s URL, the method rewritten, and the credentials dropped when it is on
    /// another origin. Send it, or a request made from it, through ``take(_:proposed:)``.
    ///
    /// Throws ``HTTPError`` with `.tooManyRedirects` past `maxHops` and `.invalidURL` for a
    /// `Location` that is unusable or not http/https.
    public func proposal(after response: HTTPResponse) throws -> HTTPRequest? {
        guard let location = Self.location(of: response) else { return nil }
        guard let target = URL(string: location, relativeTo: current.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), target.host != nil
        else {
            throw HTTPError(
                .invalidURL, "redirect to an unusable Location", url: current.displayURL)
        }
        guard scheme == "http" || scheme == "https" else {
            throw HTTPError(
                .invalidURL, "redirect to unsupported scheme '\(scheme)'", url: current.displayURL)
        }
        guard hops < maxHops else {
            throw HTTPError(
                .tooManyRedirects, "more than \(maxHops) redirects", url: current.displayURL)
        }

        var next = current
        next.url = target
        if Self.rewritesToGet(status: response.status, method: current.method) {
            next.method = .get
            next.body = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"]
            {
                next.headers.remove(name)
            }
        }
        if !Self.sameOrigin(current.url, target) {
            next.removeSecretHeaders()
            next.url = Self.withoutSecretQuery(of: current, in: next.url)
        }
        return next
    }

    /// Takes the hop with `request`, the ``proposal(after:)`` `proposed` or a request made from
    /// it (a ``RedirectingHTTPClient/Handler``'s), and returns the request to send, which
    /// becomes ``current``: the next `Location` resolves against its URL and the next hop's
    /// rules judge it.
    ///
    /// The rules judge the request as it will be sent, against ``current`` (the request that
    /// got the redirect): its URL must be http or https; on another origin, the credentials
    /// ``current`` carries are dropped from it whatever changed them back (a credential of its
    /// own, a value ``current`` does not carry, is sent as it is) and a secret body is refused;
    /// on ``current``'s origin, the credentials the proposal dropped for another origin go on,
    /// unless `request` sets its own. A request (method and URL) sent before in the chain is
    /// a loop.
    ///
    /// Throws ``HTTPError`` with `.tooManyRedirects` for a loop, `.invalidURL` for a URL that
    /// is not http/https and `.invalidRequest` for a secret body bound for another origin.
    public mutating func take(_ request: HTTPRequest, proposed: HTTPRequest) throws
        -> HTTPRequest
    {
        var next = request
        guard let scheme = next.url.scheme?.lowercased(), next.url.host != nil else {
            throw HTTPError(
                .invalidURL, "redirect to an unusable URL", url: next.displayURL)
        }
        guard scheme == "http" || scheme == "https" else {
            throw HTTPError(
                .invalidURL, "redirect to unsupported scheme '\(scheme)'", url: current.displayURL)
        }
        if Self.sameOrigin(current.url, next.url) {
            for name in current.headers.names
            where current.isSecretHeader(name) && !proposed.headers.contains(name)
                && !next.headers.contains(name)
            {
                for value in current.headers.values(for: name) { next.headers.add(name, value) }
                if current.secretHeaderNames.contains(name) { next.secretHeaderNames.insert(name) }
            }
        } else {
            for name in current.headers.names
            where (current.isSecretHeader(name) || next.isSecretHeader(name))
                && next.headers.values(for: name) == current.headers.values(for: name)
            {
                next.headers.remove(name)
            }
            next.url = Self.withoutSecretQuery(of: current, in: next.url)
            if next.bodyIsSecret, next.body != nil || next.streamedBody != nil {
                throw HTTPError(
                    .invalidRequest,
                    "a redirect to \(HTTPError.withoutCredentials(next.url).absoluteString) would send the request's secret body to another origin; not followed",
                    url: current.displayURL)
            }
        }
        if visited.isEmpty { visited.insert(Self.key(current)) }
        guard visited.insert(Self.key(next)).inserted else {
            throw HTTPError(.tooManyRedirects, "redirect loop detected", url: next.displayURL)
        }
        hops += 1
        current = next
        return next
    }

    static func rewritesToGet(status: Int, method: HTTPMethod) -> Bool {
        switch status {
        case 303: method != .head && method != .get
        case 301, 302: method == .post
        default: false
        }
    }

    /// `url` without the secret query items `current` sent (`.query` auth): a server that
    /// copies the query into a `Location` on another origin had the key sent there (trial
    /// MM). An item of the same name with another value is the target's own, and stays.
    static func withoutSecretQuery(of current: HTTPRequest, in url: URL) -> URL {
        guard !current.secretQueryNames.isEmpty,
            let sent = URLComponents(url: current.url, resolvingAgainstBaseURL: false)?
                .percentEncodedQueryItems,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems
        else { return url }
        let secrets = Set(
            sent.filter {
                current.secretQueryNames.contains($0.name.removingPercentEncoding ?? $0.name)
            }.map { "\($0.name)=\($0.value ?? "")" })
        let kept = items.filter { !secrets.contains("\($0.name)=\($0.value ?? "")") }
        guard kept.count != items.count else { return url }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return components.url ?? url
    }

    /// Same scheme, host and effective port.
    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        Origin(lhs) == Origin(rhs)
    }

    private static func key(_ request: HTTPRequest) -> String {
        "\(request.method.rawValue) \(request.url.absoluteString)"
    }
}
