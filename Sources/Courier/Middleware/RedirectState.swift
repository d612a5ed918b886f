import Foundation

/// The redirect decisions for one request chain, as a pure value: feed it each response and it
/// says which request to send next, or that the chain is finished.
///
/// Rules: at most `maxHops` redirects; a request seen before (same method and URL) is a loop;
/// only http and https; 301/302 turn POST into GET and 303 turns anything but HEAD into GET,
/// dropping the body; 307/308 keep method and body; on any change of scheme, host or port the
/// credentials (`Authorization`, `Proxy-Authorization`, `Cookie` and every header marked secret)
/// are dropped and stay dropped for the rest of the chain, and a body marked secret
/// (``HTTPRequest/bodyIsSecret``) that a 307/308 would carry there is refused.
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
    static func location(of response: HTTPResponse) -> String? {
        response.isRedirect ? response.headers["Location"] : nil
    }

    /// Returns the request for the next hop, or `nil` when `response` is not a redirect to follow.
    ///
    /// Throws ``HTTPError`` with `.tooManyRedirects` for a loop or too many hops and
    /// `.invalidURL` for a `Location` that is unusable or not http/https.
    public mutating func next(after response: HTTPResponse) throws -> HTTPRequest? {
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
            for name in next.headers.names where next.isSecretHeader(name) {
                next.headers.remove(name)
            }
            if next.bodyIsSecret, next.body != nil || next.streamedBody != nil {
                throw HTTPError(
                    .invalidRequest,
                    "a \(response.status) redirect to \(HTTPError.withoutCredentials(target).absoluteString) would send the request's secret body to another origin; not followed",
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

    /// Same scheme, host and effective port.
    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        Origin(lhs) == Origin(rhs)
    }

    private static func key(_ request: HTTPRequest) -> String {
        "\(request.method.rawValue) \(request.url.absoluteString)"
    }
}
