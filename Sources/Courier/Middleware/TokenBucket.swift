/// A token bucket as a pure value: `perSecond` tokens refill continuously up to `burst`.
///
/// `reserve(at:)` always takes a token, letting the balance go negative, and says how long the
/// caller must wait for it; callers that reserve in turn are served in that order.
public struct TokenBucket: Sendable, Hashable {
    public let perSecond: Double
    public let burst: Double
    private var tokens: Double
    private var updated: ContinuousClock.Instant?

    public init(perSecond: Double, burst: Int) {
        precondition(perSecond > 0 && burst >= 1, "a bucket needs a positive rate and burst")
        self.perSecond = perSecond
        self.burst = Double(burst)
        self.tokens = Double(burst)
    }

    /// Takes one token at `now` and returns how long to wait before using it (zero when one
    /// was available).
    public mutating func reserve(at now: ContinuousClock.Instant) -> Duration {
        if let updated {
            let elapsed = updated.duration(to: now).seconds
            tokens = min(burst, tokens + max(0, elapsed) * perSecond)
        }
        updated = now
        tokens -= 1
        guard tokens < 0 else { return .zero }
        return .nanoseconds(Int64((-tokens / perSecond * 1e9).rounded(.up)))
    }
}
