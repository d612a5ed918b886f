import Foundation

/// What one attempt waited before it was handed to the transport: its host's gate (the
/// runner's host throttles: a 429's pause, a quota, the pace after it) and the job's
/// `rateLimit`. The log's `ts` is the attempt's start plus ``total``: when the request went to
/// the transport; `blockedMs` is the total, `throttledMs` the host's part.
struct AttemptWaits: Sendable, Equatable {
    var host: TimeInterval = 0
    var rateLimit: TimeInterval = 0
    var total: TimeInterval { host + rateLimit }
}
