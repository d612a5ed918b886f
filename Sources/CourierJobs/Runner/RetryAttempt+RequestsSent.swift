import Courier
import Foundation

extension RetryAttempt {
    /// The requests this attempt and those before it sent: all of them, but for a last one
    /// that never went out: its host's gate refused it (`.throttled`, never retried), or a stop
    /// ended its wait for its host or the rate limit (trial O counted those).
    var requestsSent: Int {
        guard case .failure(let error) = outcome else { return number }
        if error.kind == .throttled { return number - 1 }
        if error.kind == .cancelled, Self.unsentWaits.contains(error.message) { return number - 1 }
        return number
    }

    /// What a wait ended by a stop before the attempt was handed to the transport says. (A
    /// stopped retry backoff says "to retry": its attempt, the one before, went out.)
    static let unsentWaits: Set<String> = [
        "cancelled while waiting for the host", "cancelled while waiting for the rate limit",
    ]
}
