/// What `--resume` found in earlier logs.
public struct ResumeState: Sendable {
    /// Keys of the tasks whose final outcome was `ok`.
    public var done: Set<UInt64>
    /// The log files read, oldest first (the new log's `resumedFrom`).
    public var logs: [String]
}
