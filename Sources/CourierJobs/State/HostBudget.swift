import Courier
import Foundation

/// One host's politeness budget as every courier process on the machine shares it
/// (`"hostThrottle": "shared"`; ``HostBudgetStore`` keeps it in a file): when the host asked
/// not to be sent anything (`Retry-After`), the quota it announced (`RateLimit-*`,
/// `X-RateLimit-*`) counted down by every process's requests, and who is learning the quota of
/// a new window. A pure value over wall-clock seconds since 1970 (processes share no other
/// clock), tested without a file or a network.
///
/// - A paused host gets nothing until the pause ends.
/// - A known quota is taken from by each request; when little is left (a tenth of its limit,
///   or one request), the rest are spread until its reset; a spent one holds every request
///   until then.
/// - While no quota is known (a new window, or a host never heard from), one request at a
///   time goes (the *probe*), and the others look again shortly: its answer tells the window's
///   quota, so that five processes starting together do not send five bursts. The probe holds
///   its place for a lease only: a process killed while probing blocks no one for longer. A
///   host whose answers announce no quota is left open for ``openFor`` seconds.
/// - Requests sent under a quota or as probes are counted until answered: a new window's quota
///   is what the host announced less those still under way (below).
/// - A 429 is news for every process: each halves its own rate to the host, once a burst
///   (``slowedAt``), so that the host's whole rate halves, not only the rate of the process that
///   was answered so.
struct HostBudget: Sendable, Equatable {
    /// Until when the host asked for nothing.
    var pausedUntil: Double?
    /// The quota last announced, counted down by every process's requests since.
    var quota: Quota?
    /// Until when a probe (a request learning the quota) holds the others back.
    var probeUntil: Double?
    /// The probe's ticket: only its answer ends the hold. Seen on a loaded machine: the late
    /// answer of a request sent in the window before ended the hold of the new window's probe,
    /// a second probe went while the first was under way, and the window got five of four.
    var probeTicket: UInt64?
    /// Until when the host, which announced no quota, takes requests freely.
    var openUntil: Double?
    /// The earliest the next request may go, when requests are spread.
    var nextSlot: Double?
    /// When the last window the budget knew of ends, kept after it is over: an answer to a
    /// request sent before it, read after it, tells nothing of a new window (below).
    var windowEnd: Double?
    /// Requests admitted under a quota or as a probe and not yet answered, by ticket: until
    /// when each counts (its admission's lease, so that a killed process's requests stop
    /// counting). An answer that tells a new window's quota was written before these reached
    /// the host, or while they did: seen on a loaded machine, a request admitted at the end of
    /// a window left its process only after the next window's probe was answered, and the
    /// window got one request more than its quota. They are taken from that quota; when some
    /// had reached the host first, the window is one or two requests short, never over.
    var inFlight: [UInt64: Double] = [:]
    /// When the host last answered 429: the news that halves every process's rate to it
    /// (``slowDownNews(now:)``). A 429 to a request sent before it is of the same burst, and
    /// leaves it. Trial W: a process that had not been answered 429 itself sent the requests
    /// a pause had held all at once when it ended, while the one answered 429 spread its own.
    var slowedAt: Double?
    /// How long a 429 stays news for the processes that had no request answered by then:
    /// while the pause it asked for lasts, and this long after it came.
    static let slowDownNewsFor: Double = 2

    struct Quota: Sendable, Equatable {
        var remaining: Int
        var resetAt: Double
        var limit: Int?
    }

    /// How long a host that announced no quota is left open before it is probed again (each
    /// answer without a quota keeps it open that much longer).
    static let openFor: Double = 60
    /// The longest a probe holds the others: a slow request (a large body, a long poll) must
    /// not stall every process's requests to its host for its whole length.
    static let longestProbe: Double = 5

    /// What ``admit(now:lease:)`` decided.
    enum Admission: Sendable, Equatable {
        /// Send after `wait` seconds (zero: at once).
        case send(wait: Double)
        /// Another request is learning the quota, or the quota is spent: ask again after
        /// `after` seconds.
        case askAgain(after: Double)
    }

    /// Takes a place for a request at `now`; `lease`: how long a probe may hold the others
    /// (the request's timeout); `ticket`: the request's own number, which its answer gives back
    /// to ``learn(status:headers:now:date:sentAt:ticket:)`` (nil: not counted as under way).
    mutating func admit(now: Double, lease: Double, ticket: UInt64? = nil) -> Admission {
        forgetExpiredFlights(now: now)
        let holdBefore = probeUntil
        let admission = decide(now: now, lease: lease)
        if probeUntil != holdBefore { probeTicket = ticket }
        if let ticket, case .send(let wait) = admission, quota != nil || probeUntil != nil {
            inFlight[ticket] = now + wait + lease
        }
        return admission
    }

    /// When the 429 a process that sends to the host now should halve its rate for was
    /// answered, if it is news (``slowedAt``): each process halves its rate once for it (its
    /// own throttle knows whether it has, ``HostThrottle``), as it would for a 429 of its own.
    func slowDownNews(now: Double) -> Double? {
        guard let slowedAt else { return nil }
        let pauseLasts = pausedUntil.map { $0 > now } ?? false
        return pauseLasts || now - slowedAt < Self.slowDownNewsFor ? slowedAt : nil
    }

    private mutating func forgetExpiredFlights(now: Double) {
        if !inFlight.isEmpty { inFlight = inFlight.filter { $0.value > now } }
    }

    private mutating func decide(now: Double, lease: Double) -> Admission {
        var earliest = now
        if let until = pausedUntil {
            if until > now { earliest = until } else { pausedUntil = nil }
        }
        if let quota, quota.resetAt <= earliest { self.quota = nil }
        if let openUntil, openUntil <= earliest { self.openUntil = nil }
        guard var quota else {
            if openUntil != nil { return .send(wait: earliest - now) }
            if let probeUntil, probeUntil > now {
                return .askAgain(after: min(0.05, probeUntil - now))
            }
            probeUntil = earliest + min(lease, Self.longestProbe)
            return .send(wait: earliest - now)
        }
        guard quota.remaining > 0 else { return .askAgain(after: quota.resetAt - now) }
        let slot = max(earliest, nextSlot ?? earliest)
        let low = quota.remaining <= max(1, Int((Double(quota.limit ?? 0) * 0.1).rounded(.up)))
        let spacing = low ? max(0, quota.resetAt - slot) / Double(quota.remaining) : 0
        quota.remaining -= 1
        self.quota = quota
        nextSlot = spacing > 0 ? slot + spacing : nil
        return .send(wait: slot - now)
    }

    /// Learns from an answer to a request this budget admitted (`nil` when none came), sent
    /// at `sentAt`: a `Retry-After` pauses the host, an announced quota is what is known of a
    /// new window and lowers what is left of the current one, no quota at all leaves the host
    /// open for a while.
    mutating func learn(
        status: Int?, headers: HTTPHeaders, now: Double, date: Date, sentAt: Double? = nil,
        ticket: UInt64? = nil
    ) {
        // The probe's answer ends its hold (or any answer, where requests carry no ticket).
        if ticket == nil || probeTicket == nil || ticket == probeTicket {
            (probeUntil, probeTicket) = (nil, nil)
        }
        if let ticket { inFlight[ticket] = nil }
        forgetExpiredFlights(now: now)
        guard let status else { return }
        if status == 429, (sentAt ?? now) >= (slowedAt ?? -.infinity) { slowedAt = now }
        if status == 429 || status == 503, let value = headers["Retry-After"],
            let seconds = RetryAfter.seconds(from: value, now: date)
        {
            let until = now + min(seconds, HostThrottle.longestPause)
            pausedUntil = max(pausedUntil ?? until, until)
        }
        guard let announced = RateLimitQuota.parse(headers, now: date), let reset = announced.reset
        else {
            // Kept open while its answers keep saying no quota; the document is rewritten only
            // when half the time is gone, not on every answer.
            if status != 429, quota == nil, (openUntil ?? 0) < now + Self.openFor / 2 {
                openUntil = now + Self.openFor
            }
            return
        }
        var resetAt = now + reset
        var remaining = announced.remaining
        if let known = quota, now < known.resetAt {
            // The window the budget knows still runs: an answer never gives back requests
            // (others may be under way, and an answer read late, on a loaded machine, counts
            // fewer than were sent), nor ends the window sooner.
            remaining = min(remaining, known.remaining)
            resetAt = max(resetAt, known.resetAt)
        } else if let end = windowEnd, (sentAt ?? now) < end {
            // Sent in a window that has ended since: the host may have counted it, and the
            // requests sent beside it, in a window of its own that began after ours (its clock
            // is not ours), so the quota it announces leaves them out. Seen on a loaded machine:
            // three requests sent at the end of our window began the host's next one, their
            // answers read late announced three left, and three more went: six in a window of
            // four. The next request learns the new window instead (a probe).
            quota = nil
            return
        } else {
            // A new window: the requests still under way may reach the host after this answer
            // was written (the host counts them, the answer does not).
            remaining = max(0, remaining - inFlight.count)
        }
        quota = Quota(remaining: remaining, resetAt: resetAt, limit: announced.limit)
        windowEnd = resetAt
        openUntil = nil
    }
}
