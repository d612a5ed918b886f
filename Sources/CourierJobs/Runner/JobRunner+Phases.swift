import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A run in three phases: ``begin()`` takes the lock, opens the log and writes `run.start`;
/// ``launch(_:progress:)`` starts the tasks and what watches them (signals, the deadline, the
/// log's folder, the progress line, the metrics and state timers); ``finish(_:_:progress:)``
/// ends them in one order, written once below, and returns the summary.
extension JobRunner {
    /// What ``begin()`` put in place.
    struct Begun {
        /// One lock per job, on its output folder and its log folder (``JobLock``); a replay
        /// rebuilt from the log alone, which saves nothing, locks the log folder alone.
        let lock: JobLock?
        let runID: String
        let started: Date
        let logURL: URL
        let log: RunLog
        /// How the run stops: a signal, the deadline; `work` is what a stop cancels.
        let stop: RunStop
        let work: Locked<Task<Void, Never>?>
        let signals: SignalWatcher
        let backend: Backend
        /// Only `courier run` reports to the outside (a replay repairs a night, it is not one).
        let reports: Bool
        let metrics: RunMetrics?
    }

    /// What ``launch(_:progress:)`` started, for ``finish(_:_:progress:)`` to end.
    struct Underway {
        let scheduled: Task<Void, Never>
        let reporter: FailureReporter
        let pings: RunPings?
        let metricsTicker: Task<Void, Never>?
        let state: ConditionalState?
        let flusher: Task<Void, Never>?
        let deadline: Task<Void, Never>?
        let ticker: Task<Void, Never>?
        let watchdog: Task<Void, Never>
        /// Set when the log file or its folder was deleted during the run.
        let vanished: Locked<Bool>
    }

    /// The lock, the log with its `run.start`, and the signal watcher, in that order: a
    /// signal at any moment after this ends the run cleanly, with `run.end`.
    func begin() throws(StartError) -> Begun {
        var lock: JobLock?
        let history =
            options.logToStandardOutput
            ? nil : options.logDirectory.appendingPathComponent(job.name)
        // Outputs in the log folder (a link to it, or `--log-dir` naming the outputs' parent)
        // took its lock for another run's: exit 3 every night (trial RRR).
        if source.savesOutputs, let history,
            own.refuses(folder: OwnPlaces.realPath(of: URL(fileURLWithPath: job.outputDir)))
        {
            throw .log(
                OutputPathError(
                    path: job.outputDir,
                    reason:
                        "(outputDir) is the run's log folder \(history.relativePath) or inside it, which holds the job's history and its lock: put the outputs elsewhere"
                ))
        }
        do throws(JobLock.Failure) {
            if source.savesOutputs {
                lock = try JobLock(
                    outputDir: URL(fileURLWithPath: job.outputDir), shard: options.shard)
                // The folders of the logs it completes as well, when `--log-dir` names another
                // (trial HHH: a resume of a log beside a replay of it made its write again).
                let completed = (options.history?.logs ?? []).map {
                    URL(fileURLWithPath: $0).deletingLastPathComponent().standardizedFileURL
                }.filter { $0.lastPathComponent == job.name }
                var shared = Set<String>()
                for folder in [history].compactMap({ $0 }) + completed
                where shared.insert(folder.standardizedFileURL.path).inserted {
                    try lock?.shareHistory(folder)
                }
            } else if let history {
                lock = try JobLock(history: history)
            }
        } catch {
            switch error {
            case .held(let url, let reason): throw .locked(url, reason: reason)
            case .cannotOpen: throw .log(error)
            }
        }
        // From getrandom(2), not UUID(): a root without /dev/urandom (a bare chroot) gave
        // every run the id 00000000.
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 16).leftPadded(to: 8)
        let started = time.date()
        let logName =
            "\(Timestamp.compact(started))-\(runID)"
            + (options.shard.map { "-" + $0.fileTag } ?? "") + ".jsonl"
        let logURL =
            options.logToStandardOutput
            ? URL(fileURLWithPath: "/dev/stdout")
            : options.logDirectory.appendingPathComponent(job.name).appendingPathComponent(logName)
        // After the grace period, what is still in flight is cancelled.
        let work = Locked<Task<Void, Never>?>(nil)
        let stop = RunStop(
            stopping: stopping, gracePeriod: options.gracePeriod, time: time,
            waits: requestTime
        ) {
            work.withLock { $0 }?.cancel()
        }
        let signals = watchSignals(stop: stop, work: work)
        let backend = options.backend ?? job.backend
        let reports: Bool = if case .job = source { true } else { false }
        let metrics = reports ? startMetrics() : nil
        let log: RunLog
        do {
            log = try openLog(at: logURL, run: runID, backend: backend, metrics: metrics)
        } catch {
            signals.stop()
            throw .log(error)
        }
        return Begun(
            lock: lock, runID: runID, started: started, logURL: logURL, log: log, stop: stop,
            work: work, signals: signals, backend: backend, reports: reports, metrics: metrics)
    }

    /// SIGINT and SIGTERM stop the run: no new task starts, those in flight have the grace
    /// period; a second signal cancels them at once.
    private func watchSignals(stop: RunStop, work: Locked<Task<Void, Never>?>) -> SignalWatcher {
        let clearsLine = showsProgress
        return SignalWatcher(
            onSignal: { [console, job, options] signal in
                // Said at once (a Ctrl-C with nothing to show looks ignored), and a test knows
                // the first signal was taken before it sends the second; under --quiet the
                // summary says it.
                guard !options.quiet else { return stop.stop(.signal(signal)) }
                let text =
                    "courier: \(job.name): \(signal == SIGINT ? "SIGINT" : "SIGTERM"): no new task starts, nor a next page; the tasks in flight have \(DurationText.exact(options.gracePeriod)) to finish (a second signal cancels them now)"
                if clearsLine {
                    console.overwriteLine(text, newline: true)
                } else {
                    console.error(text)
                }
                stop.stop(.signal(signal))
            },
            // A second signal does not wait for the grace period.
            onRepeat: { _ in work.withLock { $0 }?.cancel() })
    }

    /// The run's log, with `run.start` written: what kind of run it is and what it set out
    /// to do.
    private func openLog(at url: URL, run: String, backend: Backend, metrics: RunMetrics?)
        throws -> RunLog
    {
        let writer =
            options.logToStandardOutput
            ? LogWriter(standardOutput: (), batching: true)
            : try LogWriter(url: url, batching: true)
        var log = RunLog(
            writer: writer, run: run, job: job.name, redactor: console.redactor,
            figures: metrics?.figures)
        log.recorder = options.recorder
        var replayOf: [String] = []
        var replayFrom: String?
        var fanOut = job.tasks.contains { $0.captureSource != nil }
        var planned: Int? = total
        switch source {
        case .job: break
        case .replay(_, let runs):
            (replayOf, replayFrom) = (runs, "log")
            fanOut = false  // a list of logged requests: nothing fans out
        case .selection(let selection, let runs):
            (replayOf, replayFrom) = (runs, "job")
            // Tasks a glob chooses are found as the run goes: how many is not known now (a
            // killed run's report had said "0 of 0 tasks recorded").
            planned = selection.hasPatterns ? nil : selection.count
        }
        try log.runStart(
            jobFile: job.file.relativePath,
            // A replay of logs alone read no job file (its file is "-"): no path to name.
            jobPath: job.file == JobDecoder.standardInput || source.isLogReplay
                ? nil : job.file.standardizedFileURL.path,
            logDir: options.logToStandardOutput
                ? nil : url.deletingLastPathComponent().standardizedFileURL.path,
            sha256: job.sha256, backend: backend,
            tasks: planned, fanOut: fanOut, replayOf: replayOf, replayFrom: replayFrom,
            resumedFrom: options.resume?.logs ?? [], shard: options.shard, only: options.only,
            oncePer: options.oncePer, window: options.window,
            baseURL: source.isLogReplay ? nil : job.baseURLOverride, trace: options.trace)
        return log
    }

    /// Starts the tasks, and beside them the start ping, the metrics and conditional-state
    /// timers, the deadline, the progress line and the watch on the log's folder.
    func launch(_ begun: Begun, progress: Progress) -> Underway {
        let log = begun.log
        let pings =
            begun.reports ? startPings(backend: begun.backend, run: begun.runID, log: log) : nil
        let metricsTicker = begun.metrics.map {
            tickMetrics($0, progress: progress, started: begun.started)
        }
        let (shared, executors) = HTTPStack.shared(
            for: job, backend: begun.backend, concurrency: options.concurrency ?? job.concurrency,
            time: requestTime, hosts: hosts, shard: options.shard, offline: options.offline,
            budget: job.sharedHosts
                ? HostBudgetStore(
                    folder: HostBudgetStore.folder(environment: ProcessInfo.processInfo.environment)
                )
                : nil,
            warn: Self.once { [console, name = job.name] in
                console.error("courier: \(name): warning: \($0)")
            })
        // Token requests wait on the requests' clock: their backoff ends at a stop too.
        let oauth2 = OAuth2Sessions(
            job: job, client: shared, log: log, redactor: console.redactor, time: requestTime)
        // Validators of saved outputs for `conditional` tasks, written once a second and at
        // the end (each write is atomic, so the file is whole after any crash).
        let state =
            job.tasks.contains(where: \.conditional)
            ? ConditionalState(
                outputDir: job.outputDir, temporaries: temporaries,
                owner: options.shard?.fileTag ?? "whole", run: begun.runID
            ) {
                console.error("courier: \($0)")
            } : nil
        if let problem = since?.problem {
            console.error("courier: \(job.name): warning: \(problem)")
        }
        let flusher = state.map { state in
            Task {
                while !Task.isCancelled {
                    try? await time.sleep(for: .seconds(1))
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
        begun.work.withLock { $0 = scheduled }
        let vanished = Locked(false)
        let watchdog = watchLog(log.writer) { [stopping, work = begun.work] in
            // The record of the run is gone: nothing more is sent, and the run fails.
            vanished.withLock { $0 = true }
            stopping.withLock { $0 = true }
            work.withLock { $0 }?.cancel()
        }
        return Underway(
            scheduled: scheduled, reporter: reporter, pings: pings, metricsTicker: metricsTicker,
            state: state, flusher: flusher, deadline: watchDeadline(begun.stop),
            ticker: showsProgress ? startTicker(progress) : nil, watchdog: watchdog,
            vanished: vanished)
    }

    /// The run's deadline (`--deadline`, the job's `deadline`), as a stop.
    private func watchDeadline(_ stop: RunStop) -> Task<Void, Never>? {
        let clearsLine = showsProgress
        return (options.deadline ?? job.deadline).map { [console, job, options] seconds in
            stop.watch(deadline: seconds) {
                // Under --quiet the summary says it, should the deadline cut anything: a
                // deadline that cut nothing leaves a run that cron need not mail.
                guard !options.quiet else { return }
                let text =
                    "courier: \(job.name): the deadline (\(DurationText.short(seconds))) was reached: no new task starts, nor a next page; the tasks in flight have \(DurationText.exact(options.gracePeriod)) to finish"
                // Over a progress line, clear it first, as failure messages do.
                if clearsLine {
                    console.overwriteLine(text, newline: true)
                } else {
                    console.error(text)
                }
            }
        }
    }
}
