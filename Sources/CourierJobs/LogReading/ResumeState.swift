/// What `--resume` found in earlier logs.
struct ResumeState: Sendable {
    /// Keys of the tasks whose final outcome was `ok`.
    var done: Set<UInt64>
    /// The log files read, oldest first (the new log's `resumedFrom`).
    var logs: [String]
    /// The ids of the runs those logs hold, in the order they started.
    var runs: [String] = []
    /// For each done task that captures values: the run of its latest `ok`, whose kept
    /// values (``KeptCaptures``) stand in for sending it again.
    var okRuns: [UInt64: String] = [:]
}

/// The earlier runs a run completes (`--resume`, `replay --job`): their ids, in the order they
/// started, and the tasks they did. A run's `records` use the parts those runs left for the
/// tasks they did (``RecordsCommit``).
struct RunHistory: Sendable {
    var runs: [String]
    var done: Set<UInt64>
    /// As ``ResumeState/okRuns``.
    var okRuns: [UInt64: String]

    init(runs: [String], done: Set<UInt64>, okRuns: [UInt64: String] = [:]) {
        self.runs = runs
        self.done = done
        self.okRuns = okRuns
    }
}
