import Foundation

/// How fast one host (one origin: scheme, host and port) may be sent requests, as a pure value:
/// what its responses said, turned into when the next request may go. Every request to the
/// host is admitted by it (``admit(at:maxWait:)``) and its response shown to it
/// (``observe(status:headers:sentAt:at:date:)``); ``HostThrottlingHTTPClient`` drives one per
/// host.
///
/// - A `Retry-After` on a 429 or 503 pauses the host until the time it names, for every
///   request, not only the one that was answered so.
/// - A quota the server announces (``RateLimitQuota``: `RateLimit-*`, `X-RateLimit-*`) is
///   counted down as requests go; when little of it is left (``Settings/lowQuota`` of the
///   limit), the rest are spread evenly until its reset, and a spent quota pauses the host
///   until then.
/// - 429s set a rate by AIMD: each halves it (one halving per burst of 429s: a 429 to a request
///   sent before the last halving belongs to that one), down to ``Settings/floor``; each
///   successful response adds ``Settings/increase`` to it, up to ``Settings/ceiling``. The
///   first 429 halves the ceiling, or, with none, the rate the host was being sent requests at.
///   Until a 429, a host without a ceiling has no rate at all.
public struct HostThrottle: Sendable, Hashable {
    /// What a host's throttle starts from and keeps to.
    public struct Settings: Sendable, Hashable {
        /// The most requests per second the host is ever sent (a configured rate limit), and
        /// where the first halving starts; `nil` for none.
        public var ceiling: Double?
        /// The least requests per second repeated 429s bring the rate down to.
        public var floor: Double
        /// Requests per second added to the rate by each successful (2xx or 3xx) response.
        public var increase: Double
        /// The share of the quota's limit below which the remaining requests are spread
        /// until the reset (with no limit announced, only a spent quota holds requests).
        public var lowQuota: Double

        public init(
            ceiling: Double? = nil, floor: Double = 0.1, increase: Double = 0.1,
            lowQuota: Double = 0.1
        ) {
            precondition(floor > 0 && increase >= 0 && lowQuota >= 0, "a throttle needs a floor")
            self.ceiling = ceiling
            // Never above the ceiling, even at the floor.
            self.floor = min(floor, ceiling ?? floor)
            self.increase = increase
            self.lowQuota = lowQuota
        }
    }

    /// Why a request waits.
    public enum Hold: String, Sendable, Hashable {
        /// The host asked for a pause (`Retry-After` on a 429 or 503).
        case retryAfter
        /// The host's quota is spent until its reset.
        case quota
        /// Requests to the host are spread out: its rate after 429s, or its low quota.
        case pace
    }

    /// What ``admit(at:maxWait:)`` decided.
    public enum Admission: Sendable, Hashable {
        /// Send the request after `wait` (zero: at once); `hold` says why it waits, if it does.
        case send(wait: Duration, hold: Hold?)
        /// It would have to wait `wait`, longer than allowed: it is not to be sent, and
        /// nothing was taken for it.
        case refuse(wait: Duration, hold: Hold)
    }

    /// A quota the host announced, counted down by the requests sent since.
    public struct Quota: Sendable, Hashable {
        /// Requests left: as last announced, less those sent (or under way) since.
        public var remaining: Int
        /// When the server refills it.
        public var resetAt: ContinuousClock.Instant
        /// The requests it allows per window, when announced: what "low" is measured against.
        public var limit: Int?
    }

    /// The longest pause a header can impose (an absurd `Retry-After` must not overflow
    /// the clock); a request allowed to wait less is refused anyway.
    public static let longestPause: TimeInterval = 1_000_000

    /// What the throttle starts from and keeps to.
    public let settings: Settings
    /// Until when the host asked not to be sent anything.
    public private(set) var pausedUntil: ContinuousClock.Instant?
    /// The quota the host last announced, while its window lasts.
    public private(set) var quota: Quota?
    /// Requests per second after 429s; `nil` until the host's first 429. (A configured rate
    /// limit is enforced by its own middleware: ``Settings/ceiling`` is only where the first
    /// halving starts and the most the rate grows back to.)
    public private(set) var rate: Double?
    /// Requests admitted and not yet finished.
    public private(set) var inFlight = 0
    private var lastDecrease: ContinuousClock.Instant?
    /// The earliest the next request may go (spacing by the rate or the quota, or the end of
    /// the pause the last one waited for), and why.
    private var nextSlot: ContinuousClock.Instant?
    private var nextSlotHold: Hold?
    /// Requests admitted in the current second and the one before: the rate the host was
    /// being sent, which the first 429 halves when there is no ceiling.
    private var windowStart: ContinuousClock.Instant?
    private var windowCount = 0
    private var previousCount = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Takes a place for a request at `now`: when it may be sent. A request that would wait
    /// longer than `maxWait` is refused, and takes nothing (no quota, no place in line).
    public mutating func admit(
        at now: ContinuousClock.Instant, maxWait: Duration? = nil
    ) -> Admission {
        var earliest = now
        var hold: Hold?
        if let until = pausedUntil {
            if until > now {
                earliest = until
                hold = .retryAfter
            } else {
                pausedUntil = nil
            }
        }
        var quotaSpent = false
        if let quota, quota.remaining <= 0, quota.resetAt > earliest {
            earliest = quota.resetAt
            hold = .quota
            quotaSpent = true
        }
        var slot = earliest
        if let nextSlot, nextSlot > slot {
            slot = nextSlot
            if hold == nil { hold = nextSlotHold ?? .pace }
        }
        var spacing = Duration.zero
        var takesQuota = false
        if let quota, !quotaSpent, quota.resetAt > slot, quota.remaining > 0 {
            takesQuota = true
            if isLow(quota) { spacing = (quota.resetAt - slot) / quota.remaining }
        }
        if let rate { spacing = max(spacing, .seconds(1 / rate)) }
        let wait = slot - now
        if let maxWait, wait > maxWait { return .refuse(wait: wait, hold: hold ?? .pace) }

        if takesQuota {
            quota!.remaining -= 1
        } else if let quota, quota.resetAt <= slot {
            // Sent after the reset (or the spent quota's reset): the new window's quota is
            // unknown until a response says.
            self.quota = nil
        }
        // A host with nothing to hold requests back (no pause, quota or pace) keeps no slot:
        // a request whose clock was read a moment before another's must not wait for it.
        if spacing > .zero || hold != nil {
            nextSlot = slot + spacing
            nextSlotHold = spacing > .zero ? .pace : hold
        }
        inFlight += 1
        countAdmission(at: now)
        return .send(wait: wait, hold: hold)
    }

    /// A request admitted before the host asked for a pause, and held below the gate until the
    /// pause is over (it was waiting for a rate-limit token), takes its place in the host's
    /// rate after its 429s: the instant it may go, no earlier than `pauseEnd`. Its quota was
    /// taken when it was admitted, and it is not counted again. An instant later than `latest`
    /// takes nothing: the request is not to be sent.
    package mutating func placeHeld(
        after pauseEnd: ContinuousClock.Instant, at now: ContinuousClock.Instant,
        latest: ContinuousClock.Instant
    ) -> ContinuousClock.Instant {
        var slot = max(now, pauseEnd)
        if rate != nil, let nextSlot, nextSlot > slot { slot = nextSlot }
        if slot <= latest, let rate {
            nextSlot = slot + .seconds(1 / rate)
            nextSlotHold = .pace
        }
        return slot
    }

    /// Another process's request to the host was answered 429 at `answeredAt` (the shared
    /// host budget tells): the rate halves as for a 429 of this throttle's own, once for the
    /// burst. A 429 of its own that this one answered for already, or the same news again,
    /// changes nothing: both are older than the last halving.
    package mutating func slowDown(
        forOthers429 answeredAt: ContinuousClock.Instant, at now: ContinuousClock.Instant
    ) {
        slowDown(sentAt: answeredAt, at: now)
    }

    /// A request admitted earlier is over: answered, failed, or never sent (cancelled while it
    /// waited).
    public mutating func finished() {
        inFlight = max(0, inFlight - 1)
    }

    /// Learns from a response: a 429 halves the rate, a success raises it, a `Retry-After` (429
    /// or 503) pauses the host, an announced quota is counted down from. `sentAt` is when its
    /// request went; `date` dates an HTTP-date `Retry-After` and a Unix-time reset. Call
    /// ``finished()`` for the request first: the quota left counts the requests still under
    /// way as spent.
    public mutating func observe(
        status: Int, headers: HTTPHeaders, sentAt: ContinuousClock.Instant,
        at now: ContinuousClock.Instant, date: Date
    ) {
        if status == 429 {
            slowDown(sentAt: sentAt, at: now)
        } else if (200..<400).contains(status), let rate {
            self.rate = min(settings.ceiling ?? .infinity, rate + settings.increase)
        }
        if status == 429 || status == 503, let value = headers["Retry-After"],
            let seconds = RetryAfter.seconds(from: value, now: date)
        {
            let until = now + .seconds(min(seconds, Self.longestPause))
            if pausedUntil.map({ until > $0 }) ?? true { pausedUntil = until }
        }
        if let announced = RateLimitQuota.parse(headers, now: date) {
            take(announced, at: now)
        }
    }

    /// Whether the host holds nothing back and knows nothing worth keeping at `now`: its state
    /// can be dropped and made afresh.
    public func isIdle(at now: ContinuousClock.Instant) -> Bool {
        inFlight == 0 && rate == nil && quota == nil
            && (pausedUntil.map { $0 <= now } ?? true)
            && (nextSlot.map { $0 <= now } ?? true)
            && (windowStart.map { now - $0 >= .seconds(2) } ?? true)
    }

    /// The rate requests were admitted at, over about the last second.
    public func recentRate(at now: ContinuousClock.Instant) -> Double {
        guard let windowStart else { return 0 }
        let elapsed = (now - windowStart).seconds
        if elapsed >= 2 { return 0 }
        if elapsed >= 1 { return Double(windowCount) * (2 - elapsed) }
        return Double(previousCount) * (1 - elapsed) + Double(windowCount)
    }

    private func isLow(_ quota: Quota) -> Bool {
        guard let limit = quota.limit else { return false }
        return Double(quota.remaining) <= max(1, Double(limit) * settings.lowQuota)
    }

    private mutating func slowDown(sentAt: ContinuousClock.Instant, at now: ContinuousClock.Instant)
    {
        // Sent before the last halving: the same burst of 429s, already answered for.
        if let lastDecrease, sentAt < lastDecrease { return }
        let current = rate ?? settings.ceiling ?? max(recentRate(at: now), settings.floor)
        rate = max(settings.floor, current / 2)
        lastDecrease = now
    }

    private mutating func take(_ announced: RateLimitQuota, at now: ContinuousClock.Instant) {
        // Without a reset there is nothing to spread over nor to wait for.
        guard let reset = announced.reset else { return }
        let resetAt = now + .seconds(min(reset, Self.longestPause))
        // Requests still under way may reach the server after this answer: counted as spent.
        var fresh = Quota(
            remaining: max(0, announced.remaining - inFlight), resetAt: resetAt,
            limit: announced.limit)
        if let known = quota, known.resetAt > now,
            abs((known.resetAt - resetAt).seconds) < 1.5
        {
            // The same window (resets are whole seconds): answers come out of order, and
            // the lower count is the later truth.
            fresh.remaining = min(fresh.remaining, known.remaining)
            fresh.limit = fresh.limit ?? known.limit
        }
        quota = fresh
    }

    private mutating func countAdmission(at now: ContinuousClock.Instant) {
        if let start = windowStart {
            let elapsed = now - start
            if elapsed >= .seconds(2) {
                (windowStart, windowCount, previousCount) = (now, 0, 0)
            } else if elapsed >= .seconds(1) {
                (windowStart, previousCount, windowCount) = (start + .seconds(1), windowCount, 0)
            }
        } else {
            windowStart = now
        }
        windowCount += 1
    }
}
