/// What `--resume` found in earlier logs.
package struct ResumeState: Sendable {
    /// Keys of the tasks whose final outcome was `ok`.
    package var done: Set<UInt64>
    /// The log files read, oldest first (the new log's `resumedFrom`).
    package var logs: [String]
}
