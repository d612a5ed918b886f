import Courier
import Foundation

extension RetryAttempt {
    /// The requests this attempt and those before it sent: all of them, but for a last one
    /// that never went out: its host's gate refused it (`.throttled`, never retried), or a stop
    /// ended its wait for its host or the rate limit (``CancelledWait/leftUnsent``; trial O
    /// counted those).
    var requestsSent: Int { wentOut ? number : number - 1 }

    /// Whether this attempt's request went out: not when its host's gate refused it, nor when
    /// a stop ended its wait for its host or the rate limit.
    var wentOut: Bool {
        guard case .failure(let error) = outcome else { return true }
        if error.kind == .throttled { return false }
        return
            !(error.kind == .cancelled
            && CancelledWait(rawValue: error.message)?.leftUnsent == true)
    }
}
