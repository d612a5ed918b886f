import Foundation

/// How many token refreshes ``AuthenticatingHTTPClient`` allows in a span of time: beyond it a
/// server that rejects every token fails the request with ``ExcessiveRefreshError`` instead of
/// a refresh (and two requests) per call for ever.
/// ```swift
/// let client = AuthenticatingHTTPClient(
///     wrapping: transport, provider: tokens,
///     refreshWindow: RefreshWindow(maxRefreshes: 3, interval: 60))
/// ```
public struct RefreshWindow: Sendable, Hashable {
    /// The most refreshes within ``interval``.
    public var maxRefreshes: Int
    /// The span, in seconds.
    public var interval: TimeInterval

    /// - Parameters:
    ///   - maxRefreshes: the most refreshes within `interval` (default 5).
    ///   - interval: seconds (default 30).
    public init(maxRefreshes: Int = 5, interval: TimeInterval = 30) {
        self.maxRefreshes = maxRefreshes
        self.interval = interval
    }

    /// The refreshes that still count at `now` (those of the last ``interval``) and whether one
    /// more is allowed: a pure decision over the times of the earlier ones.
    package func admit(
        after earlier: [ContinuousClock.Instant], now: ContinuousClock.Instant
    ) -> (recent: [ContinuousClock.Instant], allowed: Bool) {
        let recent = earlier.filter { $0.duration(to: now) < .seconds(interval) }
        return (recent, recent.count < maxRefreshes)
    }
}

/// More token refreshes than the ``RefreshWindow`` allows: the server keeps rejecting fresh
/// tokens (a revoked client, a clock far off, a token for another audience).
public struct ExcessiveRefreshError: Error, Sendable, CustomStringConvertible {
    /// The window that was exceeded.
    public let window: RefreshWindow

    public var description: String {
        let seconds = WholeNumberText.of(window.interval)
        return "excessive refresh: the token was refreshed \(window.maxRefreshes) times within "
            + "\(seconds) s and the server still rejects it"
    }
}

extension ExcessiveRefreshError: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
