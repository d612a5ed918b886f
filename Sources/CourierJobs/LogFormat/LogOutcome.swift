/// A line's `outcome` (docs/log-format.md), in one place for the writer and the readers.
enum LogOutcome: String, CaseIterable, Sendable {
    /// The task is done and met its expectation.
    case ok
    /// Another attempt follows.
    case retry
    /// A page was fine and the next one follows.
    case page
    /// The task is done and did not succeed.
    case failed
    /// The task was not sent: a task it needed did not succeed.
    case skipped
}
