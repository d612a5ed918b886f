/// The earlier runs a run completes (`--resume`, `replay --job`, `run --task`): their ids, in
/// the order they started, the tasks they did, and the logs they were read from. A resume skips
/// the tasks they did; a run's `records` use the parts those runs left for them
/// (``RecordsCommit``); a task that captures and was done stands in by its kept values.
struct RunHistory: Sendable {
    var runs: [String]
    /// Keys of the tasks whose final outcome was `ok`.
    var done: Set<UInt64>
    /// For each done task that captures values: the run of its latest `ok`, whose kept
    /// values (``KeptCaptures``) stand in for sending it again.
    var okRuns: [UInt64: String]
    /// The log files read, oldest first (a resume's `resumedFrom`).
    var logs: [String]
    /// The data checks the latest run that ended failed: a resume that cannot judge them
    /// again carries them on.
    var failedChecks: [DataCheckVerdict.Failure] = []
    /// What the earlier runs did with the job's writes (``WriteHistory``).
    var writes = WriteHistory()
    /// Tasks the earlier runs did whose kept records are older than their file: no longer in
    /// ``done``, so that a resume fetches them again (``RecordsStore/staleParts(of:runs:done:)``).
    var stale: Set<UInt64> = []
    /// How many records each done task that keeps records kept, as its `ok` line said: a
    /// resume counts them toward `minRecords` (``TaskHistory/recordsKept``).
    var recordsKept: [UInt64: Int] = [:]
    /// The files the earlier runs saved, each with its task (``TaskHistory/saved``).
    var saved: [String: String] = [:]

    init(
        runs: [String], done: Set<UInt64>, okRuns: [UInt64: String] = [:], logs: [String] = []
    ) {
        self.runs = runs
        self.done = done
        self.okRuns = okRuns
        self.logs = logs
    }

    /// What `history`, read from `logs`, says the earlier runs did.
    init(_ history: TaskHistory, logs: [String]) {
        self.init(runs: history.runs, done: history.done, okRuns: history.okRuns, logs: logs)
        failedChecks = history.lastEndChecks
        writes = history.writes
        recordsKept = history.recordsKept
        saved = history.saved
    }
}
