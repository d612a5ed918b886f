import Foundation

/// What one dead man's switch ping did (`notify`): the `ping` line of the log, and the warning
/// a failed one gets on stderr. It holds no URL: a ping URL is a secret.
struct PingResult: Sendable {
    var event: NotifySettings.Event
    /// The run's exit code, for the end's ping.
    var exitCode: Int32?
    var started: Date
    /// Attempts started (the first included).
    var attempts = 0
    /// The last answer's status, when one came.
    var status: Int?
    /// Seconds from the first attempt to the end.
    var duration: TimeInterval = 0
    /// Why it failed (`kind`: a transport kind, `status` for an answer that is not 2xx,
    /// `timeout` when the whole ping ran out of time); `nil` when it was answered 2xx.
    var failure: (kind: String, message: String)?
    /// A start ping cut short because the run ended first: its end's ping says the rest, so
    /// it gets no warning of its own.
    var superseded = false

    /// The one stderr line of a failed ping, `nil` for one that went through.
    func warning(job: String) -> String? {
        guard let failure, !superseded else { return nil }
        let attemptsText = "\(attempts) attempt\(attempts == 1 ? "" : "s")"
        let what: String =
            switch event {
            case .start: "the start ping"
            case .success: "the success ping"
            case .failure: "the failure ping"
            }
        let after =
            exitCode.map { "; the exit code stays \($0)" } ?? "; the run goes on"
        return
            "courier: \(job): warning: \(what) (notify) failed after \(attemptsText): \(failure.kind): \(failure.message)\(after)"
    }
}
