/// The log's event names (docs/log-format.md), in one place for the writer and the readers.
enum LogEvent {
    static let runStart = "run.start"
    static let runEnd = "run.end"
    static let request = "request"
    /// A write (POST, PATCH) about to go to the transport, on file before its first byte is
    /// sent: a write whose last start has no `request` line after it was cut off under way,
    /// and its outcome is unknown (``WriteHistory``). No task's outcome.
    static let requestStart = "request.start"
    /// A task not sent because a task it needed did not succeed.
    static let skipped = "task.skipped"
    /// A task that could not be built (a captured value that makes no valid URL, say): no
    /// request was sent, and the task is failed.
    static let failed = "task.failed"
    /// One attempt of an OAuth2 token request (`auth.oauth2`); no task's outcome.
    static let token = "token"
    /// A dead man's switch ping (`notify`): the run's start or end, no task's outcome.
    static let ping = "ping"

    /// Whether a line of this event can be a task's final word.
    static func decidesOutcome(_ event: String) -> Bool {
        event == request || event == skipped || event == failed
    }
}
