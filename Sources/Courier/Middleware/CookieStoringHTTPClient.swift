import Foundation

/// Keeps cookies across requests, by RFC 6265: stores every response's `Set-Cookie` and sends
/// the matching ones as `Cookie`.
///
/// Put it below ``RedirectingHTTPClient`` so that it sees each hop: cookies set by a redirect
/// response are stored and sent on the next hop, and each hop gets the cookies of its own
/// origin. A `Cookie` field the caller set is kept, and the jar's cookies follow it.
/// ```swift
/// let client = RedirectingHTTPClient(wrapping: CookieStoringHTTPClient(wrapping: CurlHTTPClient()))
/// ```
public struct CookieStoringHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public let wrapped: Wrapped
    /// The jar, shared by every copy of this client.
    public let store: CookieStore
    private let time: any TimeSource

    public init(
        wrapping wrapped: Wrapped, store: CookieStore = CookieStore(),
        time: any TimeSource = SystemTimeSource()
    ) {
        self.wrapped = wrapped
        self.store = store
        self.time = time
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if let cookies = store.header(for: request.url, at: time.date()) {
            let own = request.headers["Cookie"].map { $0 + "; " } ?? ""
            request.headers.replaceOrAdd("Cookie", own + cookies)
        }
        let response = try await wrapped.perform(request)
        let fields = response.headers.values(for: "Set-Cookie")
        if !fields.isEmpty {
            store.store(setCookie: fields, from: request.url, at: time.date())
        }
        return response
    }
}

/// A ``CookieJar`` that clients and tasks share.
public final class CookieStore: Sendable {
    private let jar: Locked<CookieJar>

    public init(_ jar: CookieJar = CookieJar()) { self.jar = Locked(jar) }

    /// Every stored cookie.
    public var cookies: [Cookie] { jar.withLock { $0.cookies } }

    /// The `Cookie` field value for a request to `url`.
    public func header(for url: URL, at now: Date = Date()) -> String? {
        jar.withLock { $0.header(for: url, at: now) }
    }

    /// Stores the cookies of `Set-Cookie` fields from a response to `url`.
    public func store(setCookie fields: [String], from url: URL, at now: Date = Date()) {
        jar.withLock { $0.store(setCookie: fields, from: url, at: now) }
    }

    /// Forgets every cookie.
    public func removeAll() { jar.withLock { $0 = CookieJar(capacity: $0.capacity) } }
}
