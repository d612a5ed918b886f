import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `courier run` was asked to run a job.
struct RunOptions: Sendable {
    /// Overrides the job's `backend`.
    var backend: Backend?
    /// `--http2`: as the job's `"http2": true`.
    var http2 = false
    /// Overrides the job's `concurrency`.
    var concurrency: Int?
    /// Where logs go: `<logDirectory>/<job name>/<timestamp>-<run id>.jsonl`.
    var logDirectory: URL
    /// Print summary lines (false with `--quiet` unless something failed).
    var quiet: Bool
    /// Show a live progress line on stderr (only when it is a terminal).
    var progress: Bool
    /// `--deadline`: the seconds after which the run stops as on SIGTERM; overrides the
    /// job's `deadline`.
    var deadline: TimeInterval?
    /// How long in-flight requests may run after SIGINT/SIGTERM before they are cancelled.
    var gracePeriod: TimeInterval
    /// `--resume`: the tasks already done (``FNV1a/taskKey(job:task:)``), and the logs that say so.
    var resume: RunHistory?
    /// The earlier runs this one completes (`--resume`, `replay --job`), whose records parts
    /// it may use.
    var history: RunHistory?
    /// A replay with `--job`: the tasks runs its logs do not hold did (later ones, or the
    /// other shards of their split), which it does not send (``JobHistory/doneLater``).
    var doneElsewhere: Set<UInt64> = []
    /// `--once-per KEY`: written in `run.start` as `oncePer`, where a later run with the same
    /// key finds this one (``JobHistory/hasRun(oncePer:shard:folder:)``).
    var oncePer: String?
    /// `--window START..END` as given: written in `run.start` as `window`, where a `--resume`
    /// finds the backfill it completes.
    var window: String?
    /// `run --task GLOB…`: the ids (globs) of the tasks this run sends, with what they need;
    /// written in `run.start` as `only`.
    var only: [String] = []
    /// The task ids the command line named (`--task ID`, not a pattern): a write among them
    /// is sent even when its history says not to (``WriteRule``).
    var named: Set<String> = []
    /// What the job's history says of its writes, for `--resume`, `replay` and `run --task`
    /// (``WriteRule``); `nil` for a plain run, which starts the job afresh.
    var writes: WriteHistory?
    /// `--record DIR`: keeps every answer the run gets (``Recorder``).
    var recorder: Recorder?
    /// `--offline DIR`: the transport that answers from a recording instead of the network.
    var offline: OfflineHTTPClient?
    /// Bytes of records a merge sorts in memory before spilling a sorted run to disk
    /// (`COURIER_RECORDS_RUN_BYTES` sets it; tests make it small to prove the spilling).
    var recordsRunBytes = 32 << 20
    /// `--shard I/N`: run only this shard's tasks (``Shard``).
    var shard: Shard?
    /// `--log-dir -`: JSON lines go to standard output (for a cluster's log pipeline) instead
    /// of a file, and no lock is taken (the scheduler keeps runs apart).
    var logToStandardOutput = false
    /// Captured values kept in memory per capture before the rest go to a temporary file
    /// (`COURIER_CAPTURE_MEMORY` sets it; tests make it small to prove the file path).
    var captureMemoryLimit = 100_000
    /// `--metrics-file` and `--metrics-interval`: a Prometheus text file of the run's figures,
    /// replaced while it runs and at its end (``MetricsFile``). Only `courier run` writes one.
    var metrics: MetricsSettings?
    /// Trace context (`--trace`, the job's `"trace"`, `TRACEPARENT`): the run's trace, and
    /// whether each request carries `traceparent` (``AttemptLoop``).
    var trace: TraceSettings?
    /// `--metrics-push`: the same figures pushed to a Prometheus Pushgateway (``MetricsPush``).
    var metricsPush: MetricsPushSettings?
    /// Tasks a replay from logs refused before the run (a secret the log redacted and
    /// nobody gave): counted in the run's end (``RunSummary/notReplayed``), not sent.
    var refusedReplays = 0
    /// The run's one-line summary, as `courier run` prints it: the body of the end's ping
    /// (`notify`). Without it, a shorter line of the same counts.
    var summaryLine: (@Sendable (RunSummary) -> String)?

    init(
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
struct RunSummary: Sendable {
    var total: Int
    var ok: Int
    var failed: Int
    /// Tasks skipped by `--resume` because an earlier run did them.
    var alreadyDone: Int = 0
    /// Tasks a replay chose and could not send: refused (a secret the log redacted and
    /// nobody gave), or no longer built by the job. They fail the replay (exit 1).
    var notReplayed = 0
    var requests: Int
    /// 304s: tasks ok whose saved output was left as it was.
    var notModified = 0
    /// Writes sent again with their keys (their outcome was unknown), and writes not sent
    /// again (``WriteRule``).
    var writesResent = 0
    var writesHeld = 0
    /// Of ``missing``, the writes held by a repair (`task.skipped`, `writeHeld`): only a name
    /// sends them.
    var missingHeld = 0
    /// A plain run's failed tasks that its repair (`--resume`) would hold: writes answered
    /// 2xx, writes of unknown outcome sent without their key (``WriteRule``).
    var repairHolds = 0
    /// An offline rehearsal (`--offline`): no repair of it is offered, it is rehearsed again.
    var rehearsal = false
    /// Tasks that ended `ok` on a response an `onResponse` rule ignores (counted in `ok`).
    var ignored = 0
    var duration: TimeInterval
    /// The run stopped before a fan-out (or a task waiting for a capture) had listed all its
    /// tasks: more did not run than ``total`` counts.
    var unlisted = false
    /// The signal that stopped the run, SIGTERM's for its deadline.
    var interruptedBy: Int32?
    /// The deadline (seconds) that stopped the run, when it was one.
    var deadlineReached: TimeInterval?
    var logURL: URL
    /// Why some log line could not be written, if one could not.
    var logFailure: String?
    /// The log file was deleted during the run (which then stopped).
    var logVanished = false
    /// After a resume or a replay: the job's tasks its history does not count as done.
    var missing: Int?
    /// The log a repair of this run resumes, when it is not the job's history's: a resume of a
    /// night older than the job's latest plain run (``JobHistory/precedes(_:folder:)``).
    var repairLog: String?
    /// A shard's run: of ``missing``, those other shards own (its own repair never runs them).
    var missingElsewhere = 0
    /// With ``missing``: the history holds no whole run of the job (only `--task` runs or
    /// replays, or not every shard's run), so tasks no run reached are not counted in it.
    var historyPartial = false
    /// The job's other lines of runs (its own windows', the backfills') that left tasks not
    /// done (``JobHistory/otherLines(folder:current:)``).
    var otherLines: [JobHistory.OtherLine] = []
    /// Records files that could not be written though their tasks succeeded.
    var recordsFailed = 0
    /// The job's `checks` the run failed, though its tasks succeeded.
    var checkFailures: [DataCheckVerdict.Failure] = []
    /// A `run --task` whose globs matched no task, found only as the job ran (it fans out
    /// over captured values): a usage error, exit 2, in the log's `run.end` as in the process.
    var nothingChosen = false

    /// Why the run stopped before its end: `SIGINT`, `SIGTERM` or `deadline`; `nil` if it
    /// ran to the end.
    var stopReason: String? {
        if deadlineReached != nil { return "deadline" }
        return interruptedBy.map { $0 == SIGINT ? "SIGINT" : "SIGTERM" }
    }

    /// 0 all ok, 1 some task failed, a records file could not be written or the log is
    /// incomplete, 2 a `--task` glob matched nothing, 4 every task ok but a data check
    /// (`checks`) failed, 130/143 interrupted.
    var exitCode: Int32 {
        if let signal = interruptedBy { return 128 + signal }
        if nothingChosen { return 2 }
        if failed > 0 || notReplayed > 0 || recordsFailed > 0 || logFailure != nil { return 1 }
        return checkFailures.isEmpty ? 0 : 4
    }
}
