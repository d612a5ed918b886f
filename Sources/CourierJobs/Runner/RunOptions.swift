import Foundation

/// How `courier run` was asked to run a job.
public struct RunOptions: Sendable {
    /// Overrides the job's `backend`.
    public var backend: Backend?
    /// Overrides the job's `concurrency`.
    public var concurrency: Int?
    /// Where logs go: `<logDirectory>/<job name>/<timestamp>-<run id>.jsonl`.
    public var logDirectory: URL
    /// Print summary lines (false with `--quiet` unless something failed).
    public var quiet: Bool
    /// Show a live progress line on stderr (only when it is a terminal).
    public var progress: Bool
    /// How long in-flight requests may run after SIGINT/SIGTERM before they are cancelled.
    public var gracePeriod: TimeInterval
    /// `--resume`: the tasks already done (``FNV1a/taskKey(job:task:)``), and the logs that say so.
    public var resume: ResumeState?
    /// `--shard I/N`: run only this shard's tasks (``Shard``).
    public var shard: Shard?
    /// `--log-dir -`: JSON lines go to standard output (for a cluster's log pipeline) instead
    /// of a file, and no lock is taken (the scheduler keeps runs apart).
    public var logToStandardOutput = false
    /// Captured values kept in memory per capture before the rest go to a temporary file
    /// (`COURIER_CAPTURE_MEMORY` sets it; tests make it small to prove the file path).
    public var captureMemoryLimit = 100_000

    public init(
        backend: Backend? = nil, concurrency: Int? = nil,
        logDirectory: URL = URL(fileURLWithPath: "logs"), quiet: Bool = false,
        progress: Bool = true, gracePeriod: TimeInterval = 5
    ) {
        self.backend = backend
        self.concurrency = concurrency
        self.logDirectory = logDirectory
        self.quiet = quiet
        self.progress = progress
        self.gracePeriod = gracePeriod
    }
}

/// What a run did.
public struct RunSummary: Sendable {
    public var total: Int
    public var ok: Int
    public var failed: Int
    /// Tasks skipped by `--resume` because an earlier run did them.
    public var alreadyDone: Int = 0
    public var requests: Int
    /// 304s: tasks ok whose saved output was left as it was.
    public var notModified = 0
    public var duration: TimeInterval
    public var interruptedBy: Int32?
    public var logURL: URL
    /// Why some log line could not be written, if one could not.
    public var logFailure: String?
    /// The log file was deleted during the run (which then stopped).
    public var logVanished = false
    /// After a resume or a replay: the job's tasks its history does not count as done.
    public var missing: Int?

    /// 0 all ok, 1 some task failed or the log is incomplete, 130/143 interrupted.
    public var exitCode: Int32 {
        if let signal = interruptedBy { return 128 + signal }
        return failed > 0 || logFailure != nil ? 1 : 0
    }
}
