import Courier
import Foundation

extension RetryAttempt {
    /// The requests this attempt and those before it sent: all of them, but for a last one
    /// its host's gate refused (`.throttled`, never sent and never retried).
    var requestsSent: Int {
        if case .failure(let error) = outcome, error.kind == .throttled { return number - 1 }
        return number
    }
}
