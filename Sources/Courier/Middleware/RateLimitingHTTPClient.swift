import Foundation

/// Sends requests no faster than a token bucket allows, one bucket for everything or one per
/// host.
/// ```swift
/// let polite = RateLimitingHTTPClient(wrapping: transport, perSecond: 20, burst: 5, scope: .host)
/// ```
public struct RateLimitingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public typealias Scope = RateLimitScope

    public let wrapped: Wrapped
    public let scope: Scope
    private let limiter: RateLimiter

    public init(
        wrapping wrapped: Wrapped, perSecond: Double, burst: Int, scope: Scope = .job,
        time: any TimeSource = SystemTimeSource()
    ) {
        self.wrapped = wrapped
        self.scope = scope
        self.limiter = RateLimiter(perSecond: perSecond, burst: burst, time: time)
    }

    /// Over buckets another layer shares (the job runner's pause gate takes a token again
    /// for a request its host's pause held after it had one).
    package init(wrapping wrapped: Wrapped, limiter: RateLimiter, scope: Scope) {
        self.wrapped = wrapped
        self.scope = scope
        self.limiter = limiter
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await limiter.wait(for: request, scope: scope)
        return try await wrapped.perform(request)
    }
}

/// Where a caller above a shared ``RateLimitingHTTPClient`` learns how long its own request
/// waited for a token: `courier run` logs a request's time as when it was handed to the
/// transport, and the wait as a field of its own.
package enum RateLimitWaits {
    /// Seconds waited, added to by each rate limit the request passes while this is bound.
    @TaskLocal package static var current: Locked<TimeInterval>?
}

/// What shares a rate-limit bucket.
public enum RateLimitScope: String, Sendable, Hashable, CaseIterable {
    /// Every request shares one bucket.
    case job
    /// Each host (and port) has its own bucket.
    case host
}

/// The buckets of one ``RateLimitingHTTPClient``, shared by its copies.
package final class RateLimiter: Sendable {
    package let time: any TimeSource
    private let perSecond: Double
    private let burst: Int
    private let buckets = Locked<[String: TokenBucket]>([:])

    package init(perSecond: Double, burst: Int, time: any TimeSource) {
        self.perSecond = perSecond
        self.burst = burst
        self.time = time
    }

    /// Takes a token for `request` from its bucket and waits for it; the wait goes to
    /// ``RateLimitWaits``, a stop's cut wait as far as it went.
    package func wait(for request: HTTPRequest, scope: RateLimitScope) async throws {
        let key = scope == .job ? "" : "\(request.url.host ?? "")#\(request.url.port ?? 0)"
        let wait = reserve(key)
        guard wait > .zero else { return }
        let start = time.now()
        do {
            try await time.sleep(for: wait)
        } catch {
            let waited = start.duration(to: time.now()).seconds
            RateLimitWaits.current?.withLock { $0 += waited }
            throw CancelledWait.rateLimit.error(url: request.url)
        }
        RateLimitWaits.current?.withLock { $0 += wait.seconds }
    }

    /// Takes a token from the key's bucket and returns the wait for it.
    func reserve(_ key: String) -> Duration {
        let now = time.now()
        return buckets.withLock { buckets in
            buckets[key, default: TokenBucket(perSecond: perSecond, burst: burst)].reserve(at: now)
        }
    }
}
