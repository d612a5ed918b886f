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
final class JobRunner: Sendable {
    /// Why a run could not start.
    enum StartError: Error, CustomStringConvertible {
        /// Another run of the job holds its lock (``JobLock``): what is held, and by whom.
        case locked(URL, reason: String)
        case log(any Error)

        var description: String {
            switch self {
            case .locked(let url, let reason):
                "another run of this job holds its lock on \(url.relativePath) (\(reason)); not starting"
            case .log(let error): "\(error)"
            }
        }
    }

    /// Where the tasks come from: the job's expansion, or a list (a replay).
    enum TaskSource: Sendable {
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

        /// Whether the run re-sends logged requests alone (`replay` without `--job`).
        var isLogReplay: Bool { !savesOutputs }

        /// Whether the run walks every task of the job (a run or a resume, not a replay or
        /// `run --task`, which choose some).
        var isWholeJob: Bool {
            if case .job = self { true } else { false }
        }

        /// Whether the run completes the job's history with tasks it chose (`replay --job`,
        /// `run --task`): its summary says what the history still lacks.
        var completesHistory: Bool {
            if case .selection = self { true } else { false }
        }
    }

    let job: Job
    let options: RunOptions
    let total: Int
    let source: TaskSource
    /// `outputDir`, where saves' paths are resolved.
    let outputFolder: OutputFolder
    /// Where no output may land, its links resolved (``OwnPlaces``).
    let own: OwnPlaces
    let time: any TimeSource
    /// ``time`` as the requests' waits see it: a stop ends them (``StoppingTimeSource``).
    let requestTime: StoppingTimeSource
    /// Set by SIGINT/SIGTERM or the deadline (``RunStop``): no task starts after it.
    let stopping = Locked(false)
    /// Set when the task source had nothing more to hand out: every task of the run was
    /// started (or settled), fan-out children included.
    let sourceSpent = Locked(false)
    /// Every line to the terminal goes through the job's redactor.
    let console: Console
    /// Temporaries a killed run left in the folders this run saves into.
    let temporaries: StaleTemporaries
    /// Where saves sync and rename, off the curl loops that run the tasks (``FileWork``).
    let files = FileWork()
    /// The folder syncs that make renames durable (records parts, kept captures), shared by
    /// the renames into a folder.
    let folderSyncs = FolderSyncs()
    /// Where saves are made durable and put in place, in batches.
    let groupCommit = GroupCommit()
    /// The files this run's tasks saved (``SavedPaths``).
    let savedPaths: SavedPaths
    /// The `since` tasks' cursors, when the job has such tasks.
    let since: SinceState?
    /// The `prune` tasks' children seen, when the job has such tasks.
    let pruning: Pruning?
    /// The specs (by index) whose conditional saves came without validators, noted once.
    let validatorNotes = Locked<Set<Int>>([])
    /// The specs (by index) not every task of which ended ok (failed, skipped, or not run in
    /// a run that stopped), as the feed saw them once the run's tasks were scheduled: a
    /// `since` cursor does not move past their inputs.
    let unsettledSpecs = Locked<Set<Int>>([])
    /// Whether the run ended (stopped) before a fan-out had handed out all its tasks: the
    /// summary cannot count those, and names the repair.
    let unlisted = Locked(false)
    /// The capturing tasks whose kept values stood in for them, by id: the run that kept them.
    let keptFrom = Locked<[String: String]>([:])
    /// What each host asked for (a `Retry-After` pause, a quota, a rate after 429s), shared
    /// by every task of the run; `nil` with `"hostThrottle": false`.
    let hosts: HostThrottles?
    /// Where tasks keep their records until the run puts them in their files (``RecordsPart``).
    let recordsStore: RecordsStore
    /// The paginated tasks' checkpoints, for a resume to go on from (``ListingCheckpoint``).
    let listings: ListingCheckpoints
    /// The run's records files and whether each may change (`nil`: the job writes none).
    let recordsLedger: RecordsLedger?
    /// Records kept by the tasks that ended `ok`, by their entry's place in `tasks`
    /// (`checks.minRecords`).
    let recordCounts = Locked<[Int: Int]>([:])
    /// Whether a task done by an earlier run kept records this run cannot count (its line
    /// does not say how many): `minRecords` is then not judged (``countKept(of:key:)``).
    let uncountedRecords = Locked(false)

    /// - Parameter total: the task count from ``JobValidator``.
    init(
        job: Job, options: RunOptions, total: Int, source: TaskSource = .job,
        time: any TimeSource = SystemTimeSource()
    ) {
        self.options = options
        self.total = total
        self.source = source
        self.time = time
        requestTime = StoppingTimeSource(time)
        hosts = HTTPStack.hostThrottles(for: job, time: requestTime, shard: options.shard)
        let redactor = Redactor(secrets: job.secrets)
        // Secret captures (a login token) and OAuth2 tokens are learned as they arrive.
        let learnsSecrets =
            job.oauth2 != nil
            || job.tasks.contains { $0.captures.contains(where: \.secret) || $0.oauth2 != nil }
        let console = Console(redactor: learnsSecrets ? redactor.learning() : redactor)
        self.console = console
        recordsStore = RecordsStore(outputDir: URL(fileURLWithPath: job.outputDir), job: job.name)
        listings = ListingCheckpoints(outputDir: job.outputDir, job: job.name)
        own = OwnPlaces(
            jobFile: job.file == JobDecoder.standardInput ? nil : job.file,
            logs: options.logToStandardOutput
                ? nil : options.logDirectory.appendingPathComponent(job.name),
            outputDir: URL(fileURLWithPath: job.outputDir))
        outputFolder = OutputFolder(URL(fileURLWithPath: job.outputDir), own: own)
        recordsLedger = RecordsLedger.needed(for: job) ? RecordsLedger(job: job) : nil
        // Tagged with what the run's lock is on (``JobLock``), which it holds alone: the
        // job's, or its shard's. It removes its own leftovers at once.
        temporaries = StaleTemporaries(
            tag: StaleTemporaries.tag(
                outputDir: URL(fileURLWithPath: job.outputDir), job: job.name,
                shard: options.shard.map { ($0.index, $0.count) })
        ) { [quiet = options.quiet, folders = Locked(0)] folder, names in
            // Not under --quiet, which promises silence when every task succeeds: a resume
            // after a kill finds the killed run's temporaries as a matter of course.
            guard !quiet else { return }
            // A line per folder, for the first few: a job saving a folder per item had dozens
            // after a kill, all saying the same (trial J).
            let number = folders.withLock { count in
                count += 1
                return count
            }
            if let line = StaleTemporaries.removal(in: folder, names: names, nth: number) {
                console.error(line)
            }
        }
        // The kept cursors are read before the lock is taken: a run that finds the lock held
        // stops before it renders a task.
        since =
            job.tasks.contains { $0.since != nil || $0.window != nil }
            ? SinceState(
                outputDir: job.outputDir, tag: temporaries.tag, job: job, shard: options.shard)
            : nil
        pruning = Pruning(job: job)
        savedPaths = SavedPaths(job: job, earlier: options.history?.saved ?? [:])
        self.job = job
    }

    func run() async throws(StartError) -> RunSummary {
        let start = try begin()
        defer { withExtendedLifetime(start.lock) {} }
        let progress = Progress(total: total)
        let underway = launch(start, progress: progress)
        await underway.scheduled.value
        return await finish(start, underway, progress: progress)
    }

    /// Puts the run's records into their files (``RecordsCommit``) and says what it could not;
    /// returns how many files failed (the run then exits 1).
    func commitRecords(_ ledger: RecordsLedger, run: String, log: URL) async -> Int {
        let commit = RecordsCommit(
            store: recordsStore, run: run,
            history: options.history.map { RecordsCommit.Earlier(runs: $0.runs, done: $0.done) },
            temporaries: temporaries,
            limits: RecordsMerge.Limits(runBytes: options.recordsRunBytes), own: own
        ) { [console] note in console.error("courier: \(note)") }
        let outcome = await files.run { commit.commit(ledger) }
        let csvFailures = await writeCSVs(ledger, committed: outcome.committed)
        // Since-cursors: `outcome.committed` names, per records file, the tasks whose records
        // it now holds. A task's cursor may advance only once its records are there, so this
        // list, and nothing earlier in the run, is where to advance them.
        for file in outcome.committed { since?.release(file.tasks) }
        let limit = 10
        // The repair, as it runs when pasted (trial QQ: `courier run --resume` lacked the job
        // file): a replay's is a resume of the logs it replays, a backfill's of its own log
        // (after a night, `--resume` alone completes the night; trial PP).
        var resume = Self.resumeCommand(job, logs: options.window != nil ? [log.path] : [])
        if case .selection(_, let replayOf) = source, !replayOf.isEmpty,
            let logs = options.history?.logs, !logs.isEmpty
        {
            resume = Self.resumeCommand(job, logs: logs)
        }
        for (index, held) in outcome.held.enumerated() where index < limit {
            console.error(
                "courier: \(job.outputDir)/\(held); the file is left as it was: any records of its tasks that ended ok wait in \(recordsStore.root.relativePath), and `\(resume)` fetches the others and writes the file"
            )
        }
        if outcome.held.count > limit {
            console.error(
                "courier: \(outcome.held.count - limit) more records files left as they were")
        }
        if !options.quiet {
            for kept in outcome.keptAsIs.prefix(limit) {
                console.error("courier: \(job.outputDir)/\(kept); the file is left as it was")
            }
        }
        for failure in outcome.failures + csvFailures {
            console.error("courier: records \(job.outputDir)/\(failure)".showingControlCharacters)
        }
        // A replay that holds a file (a task of it neither replayed nor done) leaves it
        // unwritten: it did not repair the run (docs/job-file.md), whatever its own tasks did.
        let replayHeld: Int
        if case .selection(_, let replayOf) = source, !replayOf.isEmpty {
            replayHeld = outcome.held.count
        } else {
            replayHeld = 0
        }
        return outcome.failures.count + csvFailures.count + replayHeld
    }

    /// Remakes the CSV beside each records file that has one and changed in this run, or
    /// whose CSV is missing or older than it (a run killed between the two); what failed.
    func writeCSVs(_ ledger: RecordsLedger, committed: [RecordsCommit.Committed]) async
        -> [String]
    {
        let changed = Set(committed.filter(\.changed).map(\.target))
        let targets = ledger.snapshot().targets.filter { $0.target.rule.csv != nil }
        guard !targets.isEmpty else { return [] }
        let output = URL(fileURLWithPath: job.outputDir)
        let (tag, own) = (temporaries.tag, own)
        return await files.run { () -> [String] in
            var failures: [String] = []
            for (path, target) in targets {
                guard let columns = target.rule.csv,
                    let records = OutputPath.resolve(path, in: output),
                    let csv = OutputPath.resolve(RecordsCSV.path(for: path), in: output)
                else { continue }
                // Not over the job file (trial QQQ: a job named `jobs.csv`, skipped silently;
                // RRR: once the job file was newer than the records, it looked up to date).
                guard !own.refuses(csv) else {
                    failures.append("\(RecordsCSV.path(for: path)): \(OwnPlaces.refusal)")
                    continue
                }
                guard changed.contains(path) || RecordsCSV.isStale(csv, of: records) else {
                    continue
                }
                do {
                    try RecordsCSV.write(csv, from: records, columns: columns, tag: tag)
                    FolderSyncs.fsyncFolder(csv.deletingLastPathComponent().path)
                } catch {
                    failures.append("\(RecordsCSV.path(for: path)): \(error)")
                }
            }
            return failures
        }
    }

    /// Looks once a second whether the log file is still where the run writes it; calls
    /// `gone` once when it is not.
    func watchLog(_ writer: LogWriter, gone: @escaping @Sendable () -> Void)
        -> Task<Void, Never>
    {
        Task {
            while !Task.isCancelled {
                try? await time.sleep(for: .seconds(1))
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

    func startTicker(_ progress: Progress) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                console.overwriteLine(progress.line())
                try? await time.sleep(for: .milliseconds(250))
            }
        }
    }
}
