import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs one validated job: takes the job's lock, writes the log, keeps at most `concurrency`
/// tasks in flight (pulled lazily from the expansion), saves outputs, and stops cleanly on
/// SIGINT/SIGTERM.
package final class JobRunner: Sendable {
    /// Why a run could not start.
    package enum StartError: Error, CustomStringConvertible {
        /// Another run of the job holds its lock (``JobLock``): what is held, and by whom.
        case locked(URL, reason: String)
        case log(any Error)

        package var description: String {
            switch self {
            case .locked(let url, let reason):
                "another run of this job holds its lock on \(url.relativePath) (\(reason)); not starting"
            case .log(let error): "\(error)"
            }
        }
    }

    /// Where the tasks come from: the job's expansion, or a list (a replay).
    package enum TaskSource: Sendable {
        case job
        /// Requests rebuilt from logs alone (`replay` without `--job`); `replayOf` names the
        /// runs they came from.
        case replay([ExpandedTask], replayOf: [String])
        /// The job's own tasks that a replay with `--job` selected, rebuilt from the job.
        case selection(ReplaySelection, replayOf: [String])

        /// Whether the run writes into the job's output folder (and so takes its lock): a
        /// replay from the log alone saves nothing.
        var savesOutputs: Bool {
            if case .replay = self { false } else { true }
        }
    }

    package let job: Job
    package let options: RunOptions
    package let total: Int
    package let source: TaskSource
    let time: any TimeSource
    /// Set by SIGINT/SIGTERM or the deadline (``RunStop``): no task starts after it.
    let stopping = Locked(false)
    /// Every line to the terminal goes through the job's redactor.
    let console: Console
    /// Temporaries a killed run left in the folders this run saves into.
    let temporaries: StaleTemporaries
    /// Where saves sync and rename, off the curl loops that run the tasks (``FileWork``).
    let files = FileWork()
    /// The folder syncs that make saves' renames durable, shared by the saves of a folder.
    let folderSyncs = FolderSyncs()
    /// The `since` tasks' cursors, when the job has such tasks.
    let since: SinceState?
    /// The `prune` tasks' children seen, when the job has such tasks.
    let pruning: Pruning?
    /// The specs (by index) whose conditional saves came without validators, noted once.
    let validatorNotes = Locked<Set<Int>>([])
    /// What each host asked for (a `Retry-After` pause, a quota, a rate after 429s), shared
    /// by every task of the run; `nil` with `"hostThrottle": false`.
    let hosts: HostThrottles?
    /// Where tasks keep their records until the run puts them in their files (``RecordsPart``).
    let recordsStore: RecordsStore
    /// The run's records files and whether each may change (`nil`: the job writes none).
    let recordsLedger: RecordsLedger?

    /// - Parameter total: the task count from ``JobValidator``.
    package init(
        job: Job, options: RunOptions, total: Int, source: TaskSource = .job,
        time: any TimeSource = SystemTimeSource()
    ) {
        self.options = options
        self.total = total
        self.source = source
        self.time = time
        hosts = HTTPStack.hostThrottles(for: job, time: time, shard: options.shard)
        let redactor = Redactor(secrets: job.secrets)
        // Secret captures (a login token) and OAuth2 tokens are learned as they arrive.
        let learnsSecrets =
            job.oauth2 != nil
            || job.tasks.contains { $0.captures.contains(where: \.secret) || $0.oauth2 != nil }
        let console = Console(redactor: learnsSecrets ? redactor.learning() : redactor)
        self.console = console
        recordsStore = RecordsStore(outputDir: URL(fileURLWithPath: job.outputDir), job: job.name)
        recordsLedger = RecordsLedger.needed(for: job) ? RecordsLedger(job: job) : nil
        // Tagged with what the job's lock is on (``JobLock``); a run of the whole job holds it
        // alone and removes the job's leftovers at once.
        temporaries = StaleTemporaries(
            tag: StaleTemporaries.tag(
                outputDir: URL(fileURLWithPath: job.outputDir), job: job.name),
            removesOwnAtOnce: options.shard == nil
        ) { path in
            console.error("courier: removed \(path), left by an interrupted run")
        }
        // The kept cursors are read before the lock is taken: a run that finds the lock held
        // stops before it renders a task.
        since =
            job.tasks.contains { $0.since != nil }
            ? SinceState(outputDir: job.outputDir, tag: temporaries.tag) : nil
        pruning = Pruning(job: job)
        var job = job
        job.sinceCursors = since?.kept ?? [:]
        self.job = job
    }

    package func run() async throws(StartError) -> RunSummary {
        // One lock per job, on its output folder, whatever the log folder (``JobLock``). A
        // replay rebuilt from the log alone saves nothing and takes none.
        var lock: JobLock?
        if source.savesOutputs {
            do throws(JobLock.Failure) {
                lock = try JobLock(
                    outputDir: URL(fileURLWithPath: job.outputDir), shard: options.shard)
            } catch {
                switch error {
                case .held(let url, let reason): throw .locked(url, reason: reason)
                case .cannotOpen: throw .log(error)
                }
            }
        }
        defer { withExtendedLifetime(lock) {} }

        let runID = String(UUID().uuidString.lowercased().prefix(8))
        let started = Date()
        let logName =
            "\(Timestamp.compact(started))-\(runID)"
            + (options.shard.map { "-" + $0.fileTag } ?? "") + ".jsonl"
        let logURL =
            options.logToStandardOutput
            ? URL(fileURLWithPath: "/dev/stdout")
            : options.logDirectory.appendingPathComponent(job.name).appendingPathComponent(logName)
        // The watcher is in place before `run.start` is written, so a signal at any moment of
        // the run ends it cleanly, with `run.end`. After the grace period, what is still in
        // flight is cancelled.
        let work = Locked<Task<Void, Never>?>(nil)
        let stop = RunStop(stopping: stopping, gracePeriod: options.gracePeriod, time: time) {
            work.withLock { $0 }?.cancel()
        }
        let clearsLine = showsProgress
        let signals = SignalWatcher(
            onSignal: { [console, job, options] signal in
                // Said at once (a Ctrl-C with nothing to show looks ignored), and a test knows
                // the first signal was taken before it sends the second; under --quiet the
                // summary says it.
                guard !options.quiet else { return stop.stop(.signal(signal)) }
                let text =
                    "courier: \(job.name): \(signal == SIGINT ? "SIGINT" : "SIGTERM"): no new task starts; the tasks in flight have \(Progress.duration(options.gracePeriod)) to finish (a second signal cancels them now)"
                if clearsLine {
                    console.overwriteLine(text, newline: true)
                } else {
                    console.error(text)
                }
                stop.stop(.signal(signal))
            },
            // A second signal does not wait for the grace period.
            onRepeat: { _ in work.withLock { $0 }?.cancel() })
        let backend = options.backend ?? job.backend
        // Only `courier run` reports to the outside (a replay repairs a night, it is not one).
        let reports: Bool = if case .job = source { true } else { false }
        let metrics = reports ? options.metrics.map(startMetrics) : nil
        let log: RunLog
        do {
            let writer =
                options.logToStandardOutput
                ? LogWriter(standardOutput: (), batching: true)
                : try LogWriter(url: logURL, batching: true)
            log = RunLog(
                writer: writer, run: runID, job: job.name,
                redactor: console.redactor, figures: metrics?.figures)
            var replayOf: [String] = []
            var replayFrom: String?
            var fanOut = job.tasks.contains { $0.captureSource != nil }
            switch source {
            case .job: break
            case .replay(_, let runs):
                (replayOf, replayFrom) = (runs, "log")
                fanOut = false  // a list of logged requests: nothing fans out
            case .selection(_, let runs): (replayOf, replayFrom) = (runs, "job")
            }
            try log.runStart(
                jobFile: job.file.relativePath, sha256: job.sha256, backend: backend,
                tasks: total, fanOut: fanOut, replayOf: replayOf, replayFrom: replayFrom,
                resumedFrom: options.resume?.logs ?? [],
                shard: options.shard, only: options.only)
        } catch {
            signals.stop()
            throw .log(error)
        }

        let progress = Progress(total: total)
        let pings = reports ? startPings(backend: backend, run: runID, log: log) : nil
        let metricsTicker = metrics.map {
            tickMetrics($0, progress: progress, started: started)
        }
        let (shared, unredirected, executors) = HTTPStack.shared(
            for: job, backend: backend, concurrency: options.concurrency ?? job.concurrency,
            time: time, shard: options.shard)
        let oauth2 = OAuth2Sessions(
            job: job, client: unredirected, log: log, redactor: console.redactor, time: time)
        // Validators of saved outputs for `conditional` tasks, written once a second and at
        // the end (each write is atomic, so the file is whole after any crash).
        let state =
            job.tasks.contains(where: \.conditional)
            ? ConditionalState(
                outputDir: job.outputDir, temporaries: temporaries,
                owner: options.shard?.fileTag ?? "whole", run: runID
            ) {
                console.error("courier: \($0)")
            } : nil
        if let problem = since?.problem {
            console.error("courier: \(job.name): warning: \(problem)")
        }
        let flusher = state.map { state in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    // The state never on disk ahead of the lines of the responses it holds.
                    log.flush()
                    try? state.flush()
                }
            }
        }
        // With curl, the scheduler and the task slots run on the transport's event-loop
        // threads (each slot on one loop, in turn): a request then starts and resumes without
        // crossing threads (``TaskSlots``, docs/benchmarks.md).
        let reporter = FailureReporter(console: console, job: job.name, clearsLine: showsProgress)
        let scheduled = Task(executorPreference: executors.first) {
            await self.schedule(
                shared: shared, log: log, progress: progress, state: state, oauth2: oauth2,
                executors: executors, reporter: reporter)
        }
        work.withLock { $0 = scheduled }
        let deadline = (options.deadline ?? job.deadline).map { [console, job, options] seconds in
            stop.watch(deadline: seconds) {
                // Under --quiet the summary says it, should the deadline cut anything: a
                // deadline that cut nothing leaves a run that cron need not mail.
                guard !options.quiet else { return }
                let text =
                    "courier: \(job.name): the deadline (\(Progress.duration(seconds))) was reached: no new task starts; the tasks in flight have \(Progress.duration(options.gracePeriod)) to finish"
                // Over a progress line, clear it first, as failure messages do.
                if clearsLine {
                    console.overwriteLine(text, newline: true)
                } else {
                    console.error(text)
                }
            }
        }
        let ticker = showsProgress ? startTicker(progress) : nil
        let vanished = Locked(false)
        let watchdog = watchLog(log.writer) { [stopping] in
            // The record of the run is gone: nothing more is sent, and the run fails.
            vanished.withLock { $0 = true }
            stopping.withLock { $0 = true }
            work.withLock { $0 }?.cancel()
        }
        await scheduled.value
        reporter.finish()
        // Every task's line on file before the state, records and cursors that follow them.
        log.flush()
        deadline?.cancel()
        if case .selection(let selection, _) = source, stop.cause == nil,
            !vanished.withLock({ $0 })
        {
            // Selected tasks the job no longer builds never ran: the replay refuses them
            // (``ReplaySelection/unmatched``); they are no task of this run. Patterns were
            // never counted before running: only the ids are taken off.
            progress.tasksFound(-selection.unmatchedCount)
        }
        watchdog.cancel()
        flusher?.cancel()
        do {
            try state?.flush()
        } catch {
            console.error("courier: cannot keep the conditional state: \(error)")
        }
        ticker?.cancel()
        if showsProgress { console.overwriteLine() }
        var recordsFailed = 0
        if let ledger = recordsLedger, source.savesOutputs {
            if let signal = signals.signal {
                ledger.interrupted(
                    "the run was interrupted (signal \(signal)) before every task ran")
            } else if vanished.withLock({ $0 }) {
                ledger.interrupted("the run stopped when its log was deleted")
            }
            recordsFailed = await commitRecords(ledger, run: runID)
        }
        // After the records: a records task's cursor moves only once its records are in the file.
        do {
            try since?.flush()
        } catch {
            console.error("courier: cannot keep the since cursors: \(error)")
        }
        metricsTicker?.cancel()
        // The signal watcher stays until the end's ping is sent: a signal now changes
        // nothing, and the ping has its own bound.

        let counts = progress.snapshot
        let total = counts.total
        // Only a run that saw the whole listing and every child decides what is gone.
        if let pruning, case .job = source, options.resume == nil, options.shard == nil,
            stop.cause == nil, !vanished.withLock({ $0 }),
            counts.failed == 0, counts.done == total
        {
            pruning.prune(job: job, run: runID, console: console)
        } else if pruning != nil {
            console.error(
                "courier: prune: skipped: only a whole run of the job with every task ok decides which items are gone"
            )
        }
        // A deadline that cut nothing (every task had started and ended within the grace
        // period) does not make the run an interrupted one: cron and healthchecks see 0 or 1.
        var cause = stop.cause
        if case .deadline = cause, counts.done == total, !stop.cutInFlight { cause = nil }
        // Tasks an interrupted run never started are neither ok nor failed.
        let notRun = cause == nil ? total - counts.done : 0
        var summary = RunSummary(
            total: total, ok: counts.ok, failed: counts.failed + notRun,
            alreadyDone: counts.alreadyDone, requests: counts.requests,
            notModified: counts.notModified,
            duration: Date().timeIntervalSince(started), interruptedBy: cause?.exitSignal,
            logURL: logURL, logFailure: log.failure)
        summary.recordsFailed = recordsFailed
        if case .deadline(let seconds) = cause { summary.deadlineReached = seconds }
        if vanished.withLock({ $0 }) {
            summary.logFailure =
                "\(logURL.relativePath) was deleted (or its folder) during the run; the run stopped"
            summary.logVanished = true
        }
        if let failure = summary.logFailure {
            console.error("courier: the log is incomplete: \(failure)")
        }
        // Before run.end, so that the ping's line is in the log; bounded by notify.timeout.
        await pings?.ended(
            exitCode: summary.exitCode,
            body: options.summaryLine?(summary) ?? Self.shortSummary(summary, job: job.name),
            log: log)
        signals.stop()
        try? log.runEnd(
            duration: summary.duration, total: total, ok: summary.ok, failed: summary.failed,
            requests: summary.requests, exitCode: summary.exitCode,
            interrupted: summary.interruptedBy != nil, stoppedBy: summary.stopReason,
            alreadyDone: options.resume == nil ? nil : summary.alreadyDone)
        summary.logFailure = summary.logFailure ?? log.failure
        if let metrics { finishMetrics(metrics, summary: summary, started: started) }
        return summary
    }

    /// Puts the run's records into their files (``RecordsCommit``) and says what it could not;
    /// returns how many files failed (the run then exits 1).
    private func commitRecords(_ ledger: RecordsLedger, run: String) async -> Int {
        let commit = RecordsCommit(
            store: recordsStore, run: run, history: options.history, temporaries: temporaries,
            limits: RecordsMerge.Limits(runBytes: options.recordsRunBytes)
        ) { [console] note in console.error("courier: \(note)") }
        let outcome = await files.run { commit.commit(ledger) }
        // Since-cursors: `outcome.committed` names, per records file, the tasks whose records
        // it now holds. A task's cursor may advance only once its records are there, so this
        // list, and nothing earlier in the run, is where to advance them.
        for file in outcome.committed { since?.release(file.tasks) }
        let limit = 10
        for (index, held) in outcome.held.enumerated() where index < limit {
            console.error(
                "courier: \(job.outputDir)/\(held); the file is left as it was: the records of its tasks that ended ok wait in \(recordsStore.root.relativePath), and `courier run --resume` fetches the others and writes the file"
            )
        }
        if outcome.held.count > limit {
            console.error(
                "courier: \(outcome.held.count - limit) more records files left as they were")
        }
        for failure in outcome.failures {
            console.error("courier: records \(job.outputDir)/\(failure)".showingControlCharacters)
        }
        return outcome.failures.count
    }

    /// Looks once a second whether the log file is still where the run writes it; calls
    /// `gone` once when it is not.
    private func watchLog(_ writer: LogWriter, gone: @escaping @Sendable () -> Void)
        -> Task<Void, Never>
    {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { return }
                if writer.isGone {
                    gone()
                    return
                }
            }
        }
    }

    var showsProgress: Bool {
        options.progress && !options.quiet && Progress.canDraw
    }

    private func startTicker(_ progress: Progress) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                console.overwriteLine(progress.line())
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}

/// A `save` path that would leave the output folder.
struct OutputPathError: Error, CustomStringConvertible {
    let path: String
    var description: String { "\"\(path)\" escapes outputDir" }
}

/// Prints the first task failures to stderr, `--quiet` or not, so that cron mails them (all of
/// them are in the log). Each line names the job: several jobs' cron mail often goes to one
/// address.
final class FailureReporter: Sendable {
    private let console: Console
    private let job: String
    private let printed = Locked(0)
    /// Set when a progress line is on the terminal: each message first clears it, so that
    /// it is not printed over the line's tail (the next tick draws the line again).
    private let clearsLine: Bool
    static let limit = 10

    init(console: Console, job: String, clearsLine: Bool = false) {
        self.console = console
        self.job = job
        self.clearsLine = clearsLine
    }

    /// Reasons of failed tasks, in the order first seen, each with how many tasks failed so
    /// after the one printed.
    private let reasons = Locked<(order: [String], more: [String: Int])>(([], [:]))

    /// A task that failed: the first of each reason is printed in full (`task ID failed
    /// CONTEXT: REASON`), the others only counted, for ``finish()``. A night where 500 tasks
    /// failed on one outage mails one line of it and a count, not ten copies and "see the log".
    func failed(task: String, context: String = "", reason: String) {
        let first = reasons.withLock { state -> Bool in
            if state.more[reason] == nil {
                state.order.append(reason)
                state.more[reason] = 0
                return true
            }
            state.more[reason, default: 0] += 1
            return false
        }
        if first { report("task \(task) failed\(context): \(reason)") }
    }

    /// The counts of the failures not printed, one line per reason, after the run.
    func finish() {
        let (order, more) = reasons.withLock { ($0.order, $0.more) }
        for reason in order.prefix(Self.limit) {
            guard let count = more[reason], count > 0 else { continue }
            print(
                "courier: \(job.showingControlCharacters): \(count) more task\(count == 1 ? "" : "s") failed the same way: \(reason.showingControlCharacters)"
            )
        }
    }

    func report(_ message: String) {
        let count = printed.withLock { value -> Int in
            value += 1
            return value
        }
        let text: String
        if count <= Self.limit {
            text = "courier: \(job.showingControlCharacters): " + message.showingControlCharacters
        } else if count == Self.limit + 1 {
            text = "courier: \(job.showingControlCharacters): more failures; see the log"
        } else {
            return
        }
        print(text)
    }

    private func print(_ text: String) {
        if clearsLine { console.overwriteLine(text, newline: true) } else { console.error(text) }
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}

extension RetryAttempt {
    /// The requests this attempt and those before it sent: all of them, but for a last one
    /// its host's gate refused (`.throttled`, never sent and never retried).
    var requestsSent: Int {
        if case .failure(let error) = outcome, error.kind == .throttled { return number - 1 }
        return number
    }
}
