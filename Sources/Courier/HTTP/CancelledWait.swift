import Foundation

/// A wait before a request went out that a cancellation (a run's stop) ended, as its error's
/// message says it: the host's gate, the rate limit, or the backoff before a retry. A request
/// ended in the first two was never sent; one ended before a retry is the attempt before it,
/// told again as the last. The writers of these errors and the readers of a log's lines
/// (which count what was sent) name them from here.
package enum CancelledWait: String, CaseIterable, Sendable {
    case host = "cancelled while waiting for the host"
    case rateLimit = "cancelled while waiting for the rate limit"
    case retry = "cancelled while waiting to retry"

    /// The `.cancelled` error that says so.
    package func error(url: URL?) -> HTTPError { HTTPError(.cancelled, rawValue, url: url) }

    /// Whether the request this wait ended was never sent (not a retry's: its attempt was).
    package var leftUnsent: Bool { self != .retry }
}
