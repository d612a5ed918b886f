import Courier
import Foundation

extension RetryAttempt {
    /// The requests this attempt and those before it sent: all of them, but for a last one
    /// that never went out: its host's gate refused it (`.throttled`, never retried), or a stop
    /// ended its wait for its host or the rate limit (``CancelledWait/leftUnsent``; trial O
    /// counted those).
    var requestsSent: Int {
        guard case .failure(let error) = outcome else { return number }
        if error.kind == .throttled { return number - 1 }
        if error.kind == .cancelled, CancelledWait(rawValue: error.message)?.leftUnsent == true {
            return number - 1
        }
        return number
    }
}
