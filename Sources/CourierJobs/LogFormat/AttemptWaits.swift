import Foundation

/// What one attempt waited before it was handed to the transport: its host's gate (the
/// runner's host throttles: a 429's pause, a quota, the pace after it) and the job's
/// `rateLimit`, its redirect hops' waits included. The log's `ts` is the attempt's start plus
/// ``beforeSent``: when the request went to the transport; `blockedMs` is the total,
/// `throttledMs` the host's part.
struct AttemptWaits: Sendable, Equatable {
    var host: TimeInterval = 0
    var rateLimit: TimeInterval = 0
    /// What the first hop waited, when redirect hops waited too: their waits came after the
    /// request went out (trial O: a redirected line's `ts` followed its first hop's).
    var firstHop: TimeInterval?
    var total: TimeInterval { host + rateLimit }
    /// The waits before the attempt's first request went to the transport.
    var beforeSent: TimeInterval { firstHop ?? total }
}
