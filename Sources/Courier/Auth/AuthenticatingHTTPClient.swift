import Foundation

/// Attaches a token from a ``TokenProvider`` and, when the server rejects it (401 by default),
/// refreshes it once and sends the request again.
///
/// The provider is asked for its token before every request, so a token it renewed on its own
/// is used at once; a token it says is expired (``TokenProvider/currentAccessToken()``, within
/// `expiryLeeway` seconds of its expiry) is refreshed before it is sent. More refreshes than the
/// ``RefreshWindow`` allows fail with ``ExcessiveRefreshError`` (inside ``Failure``).
///
/// Concurrent rejections share one refresh (single flight): ten requests that all get a 401
/// cause one call of ``TokenProvider/refreshToken(rejected:)``, and all ten are resent with its
/// token; requests that start while a refresh runs wait for it instead of sending a token known
/// to be rejected. A failed refresh fails every request that waited for it, with ``Failure``. A request
/// is resent at most once, so a server that rejects every token cannot make it loop: the
/// second 401 is returned as it is.
/// ```swift
/// let client = AuthenticatingHTTPClient(wrapping: CurlHTTPClient(), provider: MyTokens())
/// ```
public struct AuthenticatingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    /// No token could be had (or refreshed); `underlying` is the provider's error.
    public struct Failure: Error, CustomStringConvertible, LocalizedError {
        public let underlying: any Error
        public var description: String { "cannot get an access token: \(underlying)" }
        /// The ``description``, the token source's own error in it (trial KK: an OAuth2
        /// endpoint's `invalid_client` was hidden behind "The operation could not be completed").
        public var errorDescription: String? { description }
    }

    public let wrapped: Wrapped
    private let rejectedStatuses: Set<Int>
    private let origin: Origin?
    private let refresher: TokenRefresher
    private let sign: @Sendable (HTTPRequest, String) -> HTTPRequest
    private let willResend: (@Sendable (HTTPResponse) async -> Void)?

    /// - Parameters:
    ///   - header: where the token goes (`Authorization`), as `"\(scheme) \(token)"`; an empty
    ///     scheme sends the bare token.
    ///   - rejectedStatuses: the statuses that mean "this token is no longer good".
    ///   - origin: when set, only requests to this origin get the token; others pass through
    ///     as they are, so that a token is never sent to another server.
    ///   - refreshWindow: the most refreshes in a span of time; `nil` for no limit.
    ///   - expiryLeeway: seconds before a known expiry at which a token counts as expired.
    public init(
        wrapping wrapped: Wrapped, provider: any TokenProvider, header: String = "Authorization",
        scheme: String = "Bearer", rejectedStatuses: Set<Int> = [401], origin: Origin? = nil,
        refreshWindow: RefreshWindow? = RefreshWindow(), expiryLeeway: TimeInterval = 30,
        time: any TimeSource = SystemTimeSource()
    ) {
        self.init(
            wrapping: wrapped, provider: provider, rejectedStatuses: rejectedStatuses,
            origin: origin, refreshWindow: refreshWindow, expiryLeeway: expiryLeeway, time: time
        ) { request, token in
            var request = request
            request.headers.replaceOrAdd(header, scheme.isEmpty ? token : "\(scheme) \(token)")
            request.secretHeaderNames.insert(header.lowercased())
            return request
        }
    }

    /// For credentials that are more than one header: `sign` puts `token` into the request,
    /// and must mark what it adds as secret (``HTTPRequest/secretHeaderNames``).
    /// - Parameter willResend: called after a rejection was answered with a fresh token and
    ///   before the request is sent again with it (a job runner logs the rejected attempt here).
    public init(
        wrapping wrapped: Wrapped, provider: any TokenProvider, rejectedStatuses: Set<Int> = [401],
        origin: Origin? = nil, refreshWindow: RefreshWindow? = RefreshWindow(),
        expiryLeeway: TimeInterval = 30, time: any TimeSource = SystemTimeSource(),
        willResend: (@Sendable (HTTPResponse) async -> Void)? = nil,
        sign: @escaping @Sendable (HTTPRequest, String) -> HTTPRequest
    ) {
        self.origin = origin
        self.wrapped = wrapped
        self.rejectedStatuses = rejectedStatuses
        self.refresher = TokenRefresher(
            provider: provider, window: refreshWindow, leeway: expiryLeeway, time: time)
        self.sign = sign
        self.willResend = willResend
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Another server's request, or one whose caller set its own `Authorization` over an
        // API client's configured tokens, goes as it is.
        if request.authorizationIsCallers || origin.map({ Origin(request.url) != $0 }) == true {
            return try await wrapped.perform(request)
        }
        let token: String
        do {
            token = try await refresher.current()
        } catch {
            throw Failure(underlying: error)
        }
        // Streamed, a rejected response's body never reaches the reader: the resend's does.
        let rejected = rejectedStatuses
        let (first, channel) = sign(request, token).attempt { status, _ in
            !rejected.contains(status)
        }
        let response = try await wrapped.perform(first)
        guard rejectedStatuses.contains(response.status), channel?.reachedReader != true else {
            return response
        }
        let fresh: String
        do {
            fresh = try await refresher.refresh(rejected: token)
        } catch {
            throw Failure(underlying: error)
        }
        await willResend?(response)
        return try await wrapped.perform(sign(request, fresh))
    }
}
