import Courier
import Foundation

/// One attempt of one task, as its `request` line says it (docs/log-format.md): the value the
/// run's log writer writes (``RunLog/request(_:)``), made where the attempt is judged.
struct AttemptRecord: Sendable {
    var task: String
    /// The attempt: its request, its response or error, when it started and how long it took.
    var attempt: RetryAttempt
    var outcome: LogOutcome
    /// The page of a paginated task, from 1.
    var page: Int?
    /// Where its body was saved, when it was.
    var savedTo: String?
    /// Why an answered attempt failed its task (an expectation, a save), when it did.
    var failure: (kind: String, message: String)?
    /// The logged task a replay re-sends.
    var replayOf: ReplayOrigin?
    /// A 304: the saved output was left as it was.
    var notModified: Bool
    /// The captured token this attempt's 401 had renewed before the next attempt.
    var renewedToken: String?
    /// A login task's request sent again to renew its token.
    var renewal: Bool
    /// Why the pages may have stopped early, or a `since` task's cursor note.
    var warning: String?
    /// The `onResponse` action of the rule the response matched.
    var action: String?
    /// What the attempt waited before it was sent.
    var waits: AttemptWaits
    /// The header the task's idempotency key is in (`idempotencyKey`), when it asked for one:
    /// the line says the key it sent.
    var keyHeader: String?
    /// The task is no write (``ExpandedTask/isWrite(in:)`` is `false`): a POST or PATCH line
    /// says `safe`, so that a replay of the log alone sends it again as the job would.
    var safe: Bool
    /// A write's request digest (``ExpandedTask/Fields/writeDigest``): the line says it.
    var requestDigest: String?
    /// On a records task's last line: the records it kept (`recordsKept`).
    var recordsKept: Int?

    init(
        task: String, attempt: RetryAttempt, outcome: LogOutcome, page: Int? = nil,
        savedTo: String? = nil, failure: (kind: String, message: String)? = nil,
        replayOf: ReplayOrigin? = nil, notModified: Bool = false, renewedToken: String? = nil,
        renewal: Bool = false, warning: String? = nil, action: String? = nil,
        waits: AttemptWaits = AttemptWaits(), keyHeader: String? = nil, safe: Bool = false,
        requestDigest: String? = nil, recordsKept: Int? = nil
    ) {
        self.task = task
        self.attempt = attempt
        self.outcome = outcome
        self.page = page
        self.savedTo = savedTo
        self.failure = failure
        self.replayOf = replayOf
        self.notModified = notModified
        self.renewedToken = renewedToken
        self.renewal = renewal
        self.warning = warning
        self.action = action
        self.waits = waits
        self.keyHeader = keyHeader
        self.safe = safe
        self.requestDigest = requestDigest
        self.recordsKept = recordsKept
    }
}
