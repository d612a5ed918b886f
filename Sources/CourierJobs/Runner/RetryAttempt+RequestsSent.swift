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

    /// Whether the attempt failed before any byte of its request reached a server: no address,
    /// no connection, no TLS session, or a request that could not be made. It counts as sent
    /// (it was tried), but its body went nowhere (trial OO: a POST refused at connect logged
    /// its body's bytes as sent).
    var failedBeforeSending: Bool {
        guard case .failure(let error) = outcome else { return false }
        return [.invalidURL, .invalidRequest, .dns, .connect, .tls].contains(error.kind)
    }
}
