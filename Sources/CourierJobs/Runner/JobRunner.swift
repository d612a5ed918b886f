import Courier
import Foundation

/// Where the scheduler takes its next task from.
private struct TaskSupply: Sendable {
    /// Present for a job's own tasks: it is told when each ends.
    let feed: TaskFeed?
    let next: @Sendable () -> TaskFeed.Item
}

/// Runs one validated job: takes the job's lock, writes the log, keeps at most `concurrency`
/// tasks in flight (pulled lazily from the expansion), saves outputs, and stops cleanly on
/// SIGINT/SIGTERM.
public final class JobRunner: Sendable {
    /// Why a run could not start.
    public enum StartError: Error, CustomStringConvertible {
        case locked(URL)
        case log(any Error)

        public var description: String {
            switch self {
            case .locked(let url):
                "another run of this job holds its lock (\(url.relativePath)); not starting"
            case .log(let error): "\(error)"
            }
        }
    }

    /// Where the tasks come from: the job's expansion, or a list (a replay).
    public enum TaskSource: Sendable {
        case job
        /// Requests rebuilt from logs; `replayOf` names the runs they came from.
        case replay([ExpandedTask], replayOf: [String])
    }

    public let job: Job
    public let options: RunOptions
    public let total: Int
    public let source: TaskSource
    let time: any TimeSource
    private let stopping = Locked(false)
    /// Every line to the terminal goes through the job's redactor.
    let console: Console
    /// Temporaries a killed run left in the folders this run saves into.
    private let temporaries: StaleTemporaries

    /// - Parameter total: the task count from ``JobValidator``.
    public init(
        job: Job, options: RunOptions, total: Int, source: TaskSource = .job,
        time: any TimeSource = SystemTimeSource()
    ) {
        self.job = job
        self.options = options
        self.total = total
        self.source = source
        self.time = time
        let redactor = Redactor(secrets: job.secrets)
        // Secret captures (a login token) are learned as they arrive.
        let capturesSecrets = job.tasks.contains { $0.captures.contains(where: \.secret) }
        let console = Console(redactor: capturesSecrets ? redactor.learning() : redactor)
        self.console = console
        temporaries = StaleTemporaries { path in
            console.error("courier: removed \(path), left by an interrupted run")
        }
    }

    public func run() async throws(StartError) -> RunSummary {
        // Each shard has its own lock, so the shards of one job run side by side on a shared
        // volume. Logging to standard output takes none: there is no folder to share.
        let shardTag = options.shard.map { "." + $0.fileTag } ?? ""
        let lockURL = options.logDirectory.appendingPathComponent("\(job.name)\(shardTag).lock")
        var lock: JobLock?
        if !options.logToStandardOutput {
            do {
                guard let taken = try JobLock(url: lockURL) else {
                    throw StartError.locked(lockURL)
                }
                lock = taken
            } catch let error as StartError {
                throw error
            } catch {
                throw .log(error)
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
        let backend = options.backend ?? job.backend
        let log: RunLog
        do {
            let writer =
                options.logToStandardOutput
                ? LogWriter(standardOutput: ()) : try LogWriter(url: logURL)
            log = RunLog(
                writer: writer, run: runID, job: job.name,
                redactor: console.redactor)
            var replayOf: [String] = []
            if case .replay(_, let runs) = source { replayOf = runs }
            try log.runStart(
                jobFile: job.file.relativePath, sha256: job.sha256, backend: backend,
                replayOf: replayOf, resumedFrom: options.resume?.logs ?? [],
                shard: options.shard)
        } catch {
            throw .log(error)
        }

        let progress = Progress(total: total)
        let shared = HTTPStack.shared(
            for: job, backend: backend, concurrency: options.concurrency ?? job.concurrency,
            time: time, shard: options.shard)
        // The watcher is in place before the first request, so a signal at any moment of the
        // run ends it cleanly. After the grace period, what is still in flight is cancelled.
        let work = Locked<Task<Void, Never>?>(nil)
        let signals = SignalWatcher(
            onSignal: { [stopping, options] _ in
                stopping.withLock { $0 = true }
                Task {
                    try? await Task.sleep(for: .seconds(options.gracePeriod))
                    work.withLock { $0 }?.cancel()
                }
            },
            // A second signal does not wait for the grace period.
            onRepeat: { _ in work.withLock { $0 }?.cancel() })
        // Validators of saved outputs for `conditional` tasks, written once a second and at
        // the end (each write is atomic, so the file is whole after any crash).
        let state =
            job.tasks.contains(where: \.conditional)
            ? ConditionalState(outputDir: job.outputDir) { console.error("courier: \($0)") } : nil
        let flusher = state.map { state in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    try? state.flush()
                }
            }
        }
        let scheduled = Task {
            await schedule(shared: shared, log: log, progress: progress, state: state)
        }
        work.withLock { $0 = scheduled }
        let ticker = showsProgress ? startTicker(progress) : nil
        await scheduled.value
        flusher?.cancel()
        do {
            try state?.flush()
        } catch {
            console.error("courier: cannot keep the conditional state: \(error)")
        }
        ticker?.cancel()
        if showsProgress { console.error("\r\u{1B}[K", newline: false) }
        signals.stop()

        let counts = progress.snapshot
        let total = counts.total
        // Tasks an interrupted run never started are neither ok nor failed.
        let notRun = signals.signal == nil ? total - counts.done : 0
        var summary = RunSummary(
            total: total, ok: counts.ok, failed: counts.failed + notRun,
            alreadyDone: counts.alreadyDone, requests: counts.requests,
            duration: Date().timeIntervalSince(started), interruptedBy: signals.signal,
            logURL: logURL, logFailure: log.failure)
        if let failure = summary.logFailure {
            console.error("courier: the log is incomplete: \(failure)")
        }
        try? log.runEnd(
            duration: summary.duration, total: total, ok: summary.ok, failed: summary.failed,
            requests: summary.requests, exitCode: summary.exitCode,
            interrupted: summary.interruptedBy != nil,
            alreadyDone: options.resume == nil ? nil : summary.alreadyDone)
        summary.logFailure = summary.logFailure ?? log.failure
        return summary
    }

    private var showsProgress: Bool {
        options.progress && !options.quiet && Progress.stderrIsTerminal
    }

    private func startTicker(_ progress: Progress) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                console.error("\r\u{1B}[K" + progress.line(), newline: false)
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    private func schedule(
        shared: AnyHTTPClient, log: RunLog, progress: Progress, state: ConditionalState?
    ) async {
        let concurrency = options.concurrency ?? job.concurrency
        let reporter = FailureReporter(console: console, clearsLine: showsProgress)
        let startedAt = time.now()
        let done = options.resume?.done ?? []
        let shard = options.shard
        let supply = makeSupply()
        defer { supply.feed?.close() }
        let tokens = supply.feed.map {
            renewableTokens(feed: $0, shared: shared, log: log, progress: progress)
        }
        await withTaskGroup(of: Bool.self) { group in
            var running = 0
            var waiterRunning = false
            var waitingFor: Int?
            /// Starts tasks up to the concurrency cap. Tasks that cannot run (a build error, a
            /// failed input) are logged and counted here, so their slots go to the next ones.
            func fill() {
                waitingFor = nil
                while running < concurrency, !stopping.withLock({ $0 }), !Task.isCancelled {
                    let item = supply.next()
                    // Fan-out children are tasks validation could not count.
                    if supply.feed != nil, let spec = item.spec,
                        job.tasks[spec].captureSource != nil
                    {
                        progress.tasksFound(1)
                    }
                    switch item {
                    case .task(let task)
                    where shard.map {
                        !$0.runs(taskID: task.id, capturing: job.tasks[task.specIndex].hasCaptures)
                    } == true:
                        // Another shard's task.
                        progress.taskInOtherShard()
                        supply.feed?.finished(task.specIndex, ok: true, id: task.id)
                    case .skipped(let skipped)
                    where shard.map { !$0.owns(taskID: skipped.id) } == true:
                        progress.taskInOtherShard()
                        supply.feed?.finished(skipped.spec, ok: false, id: skipped.id)
                    case .task(let task)
                    where !done.isEmpty && !job.tasks[task.specIndex].hasCaptures
                        && done.contains(FNV1a.taskKey(job: job.name, task: task.id)):
                        // Done by an earlier run. (A task with captures runs again: the
                        // values it hands on are not kept between runs.)
                        progress.taskAlreadyDone()
                        supply.feed?.finished(task.specIndex, ok: true, id: task.id)
                    case .task(let task):
                        running += 1
                        group.addTask {
                            if let offset = task.sendAt {
                                // A paced replay keeps the logged gaps between requests.
                                try? await self.time.sleep(
                                    for: startedAt.advanced(by: .seconds(offset)) - self.time.now())
                            }
                            let ok = await self.execute(
                                task, shared: shared, log: log, progress: progress,
                                reporter: reporter, state: state, feed: supply.feed,
                                tokens: tokens ?? [:])
                            supply.feed?.finished(task.specIndex, ok: ok, id: task.id)
                            return true
                        }
                    case .failure(let error, let spec):
                        // A task that does not build (validation checked what it could; a
                        // lines file changed underneath, or a captured value makes a bad URL).
                        reporter.report("\(error)")
                        progress.taskFinished(ok: false, requests: 0)
                        supply.feed?.finished(spec, ok: false, id: job.tasks[spec].id)
                    case .skipped(let skipped):
                        try? log.skipped(task: skipped.id, reason: skipped.reason)
                        reporter.report("task \(skipped.id) skipped: \(skipped.reason)")
                        progress.taskFinished(ok: false, requests: 0)
                        supply.feed?.finished(skipped.spec, ok: false, id: skipped.id)
                    case .wait(let changes):
                        waitingFor = changes
                        return
                    case .end:
                        return
                    }
                }
            }
            fill()
            while true {
                if let changes = waitingFor, !waiterRunning, let feed = supply.feed {
                    guard running > 0 else {
                        // Cannot happen with a validated job (no cycles); never hang on it.
                        reporter.report(
                            "internal error: tasks wait for captures that can no longer come"
                        )
                        break
                    }
                    // Wakes the loop when a running task captures something, so that children
                    // start while their parent is still paging.
                    waiterRunning = true
                    group.addTask { [stopping] in
                        await feed.waitForChange(after: changes) { stopping.withLock { $0 } }
                        return false
                    }
                }
                guard let wasTask = await group.next() else { break }
                if wasTask { running -= 1 } else { waiterRunning = false }
                fill()
            }
        }
    }

    /// The tasks to run: the job's, through a ``TaskFeed`` (which knows about captures), or a
    /// replay's list.
    private func makeSupply() -> TaskSupply {
        switch source {
        case .job:
            let feed = TaskFeed(
                job: job, redactor: console.redactor,
                memoryLimit: options.captureMemoryLimit)
            return TaskSupply(feed: feed) { feed.next() }
        case .replay(let tasks, _):
            let list = Locked(tasks.makeIterator())
            return TaskSupply(feed: nil) {
                list.withLock { $0.next() }.map { .task($0) } ?? .end
            }
        }
    }

    /// Runs one task, every page of it; whether it succeeded.
    private func execute(
        _ task: ExpandedTask, shared: AnyHTTPClient, log: RunLog, progress: Progress,
        reporter: FailureReporter, state: ConditionalState?, feed: TaskFeed?,
        tokens: [String: CapturedToken] = [:]
    ) async -> Bool {
        var paginator = task.paginate.map { Paginator(rule: $0, first: task.request) }
        var request = task.request
        if task.conditional, let state, let save = task.save {
            Self.askIfChanged(&request, state: state, save: save, outputDir: job.outputDir)
        }
        var requests = 0
        var page = 1
        let streams = streamsSave(task, capturing: feed != nil)
        while true {
            // One page (or the task's only request), with its own retries.
            let pageNumber = paginator == nil ? nil : page
            let attempts = Locked(PageAttempts())
            // What the observers below log, taken out of the task so that their contexts do
            // not copy the whole task (request and expectations included) on every page.
            let taskID = task.id
            let replayOf = task.replayOf
            let retrying = HTTPStack.retrying(shared, task: task, time: time) { attempt in
                // One lock per attempt: numbered on after a renewal, and kept when final.
                let attempt = attempts.withLock { state -> RetryAttempt in
                    var attempt = attempt
                    attempt.number += state.renumbering
                    if attempt.retryDelay == nil { state.last = attempt }
                    return attempt
                }
                if attempt.retryDelay != nil {
                    try? log.request(
                        task: taskID, attempt: attempt, outcome: "retry", replayOf: replayOf,
                        page: pageNumber)
                }
            }
            let renewingClient = renewing(retrying, for: task, tokens: tokens) { name in
                // The token was rejected and renewed: the rejected attempt is a retry.
                let rejected = attempts.withLock { state -> RetryAttempt? in
                    defer { state.last = nil }
                    if let last = state.last { state.renumbering = last.number }
                    return state.last
                }
                if var rejected {
                    rejected.retryDelay = 0
                    try? log.request(
                        task: taskID, attempt: rejected, outcome: "retry",
                        replayOf: replayOf, page: pageNumber, renewedToken: name)
                }
            }
            let streamed = streams ? streamedSave(for: task, page: pageNumber) : nil
            var sent = request
            if let streamed { sent.bodyDestination = .file(streamed.temporary) }
            var tokenProblem: String?
            do {
                if let renewingClient {
                    _ = try await renewingClient.perform(sent)
                } else {
                    _ = try await retrying.perform(sent)
                }
            } catch let error as AuthenticatingHTTPClient<AnyHTTPClient>.Failure {
                tokenProblem = "\(error)"
            } catch {}
            guard let attempt = attempts.withLock({ $0.last }) else {
                streamed?.discard()
                return false
            }
            requests += attempt.number

            // Captures are taken in `evaluate` (secret ones learned by the redactor) before
            // the line that could show them is written, and before anything is saved.
            var result = evaluate(
                attempt, of: task, page: pageNumber, captures: feed.map { feed in feed.capture },
                streamed: streamed)
            if let tokenProblem, !result.ok, var failure = result.failure {
                failure.message += "; \(tokenProblem)"
                result.failure = failure
            }
            if let streamed, result.savedTo == nil { streamed.discard() }
            if result.ok, !result.notModified, task.conditional, let state, let save = task.save,
                case .success(let response) = attempt.outcome
            {
                state.record(response, for: save)
            }
            var next: HTTPRequest?
            if result.ok, var current = paginator, case .success(let response) = attempt.outcome {
                do {
                    next = try current.next(after: response, to: request)
                    paginator = current
                } catch {
                    result.ok = false
                    result.failure = ("pagination", error.message)
                }
            }
            let outcome = !result.ok ? "failed" : next == nil ? "ok" : "page"
            try? log.request(
                task: task.id, attempt: attempt, outcome: outcome, savedTo: result.savedTo,
                failure: attempt.outcome.isFailure ? nil : result.failure,
                replayOf: task.replayOf, notModified: result.notModified, page: pageNumber)
            guard result.ok, let next else {
                progress.taskFinished(ok: result.ok, requests: requests)
                if !result.ok, let failure = result.failure {
                    let onPage = pageNumber.map { " on page \($0)" } ?? ""
                    reporter.report(
                        "task \(task.id) failed\(onPage) after \(attempt.number) attempt\(attempt.number == 1 ? "" : "s"): \(failure.message)"
                    )
                }
                return result.ok
            }
            request = next
            page += 1
        }
    }

    /// The final attempt of one page, and how far its attempts are renumbered: after a
    /// rejected token was renewed, the retry layer counts from 1 again, and the log goes on.
    private struct PageAttempts {
        var last: RetryAttempt?
        var renumbering = 0
    }

    /// Whether the task's saved body goes straight to disk as it arrives, so that memory stays
    /// flat however large it is: when nothing reads the body (captures, body expectations and
    /// pagination all parse it, so those bodies stay in memory, up to the transport's cap).
    private func streamsSave(_ task: ExpandedTask, capturing: Bool) -> Bool {
        task.save != nil && task.paginate == nil && task.expectation.json.isEmpty
            && task.expectation.bodyContains.isEmpty
            && !(capturing && !job.tasks[task.specIndex].captures.isEmpty)
    }

    /// A temporary file beside the task's save target for the transport to write the body
    /// into; `nil` when it cannot be made, and then the body comes to memory and the save
    /// reports the problem as it always does.
    private func streamedSave(for task: ExpandedTask, page: Int?) -> FileReplacement? {
        guard var path = task.save else { return nil }
        if let page { path = path.replacingOccurrences(of: "{page}", with: String(page)) }
        guard let url = OutputPath.resolve(path, in: URL(fileURLWithPath: job.outputDir)) else {
            return nil
        }
        do {
            let folder = url.deletingLastPathComponent()
            try FileSystem.makeFolders(folder)
            temporaries.sweep(folder)
            return try FileReplacement(replacing: url)
        } catch {
            return nil
        }
    }

    /// Hands the response's captured values to `store` (the feed); why not, when they cannot
    /// be taken.
    private func takeCaptures(
        of task: ExpandedTask, from response: HTTPResponse,
        into store: ([String], CaptureRule) throws -> Void
    )
        -> String?
    {
        let rules = job.tasks[task.specIndex].captures
        guard !rules.isEmpty else { return nil }
        let document: JSONNode? =
            rules.contains { if case .json = $0.source { true } else { false } }
            ? try? JSONParser.parse([UInt8](response.body)) : nil
        for rule in rules {
            switch rule.values(in: response, document: document) {
            case .success(let values):
                do {
                    try store(values, rule)
                } catch {
                    return "\(error)"
                }
            case .failure(let problem):
                return problem.message
            }
        }
        return nil
    }

    /// Adds `If-None-Match`/`If-Modified-Since` from the state, when the saved output is
    /// still there (a deleted file must be fetched whole) and the task did not set them.
    static func askIfChanged(
        _ request: inout HTTPRequest, state: ConditionalState, save: String, outputDir: String
    ) {
        guard let validators = state.validators(for: save),
            FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: outputDir).appendingPathComponent(save).path)
        else { return }
        validators.addConditions(to: &request)
    }

    /// What one final attempt means for its task: ok or why not, and what was saved.
    struct AttemptResult {
        var ok = false
        var savedTo: String?
        var notModified = false
        var failure: (kind: String, message: String)?
    }

    /// - Parameter streamed: where the transport wrote the body, when it went to a file.
    func evaluate(
        _ attempt: RetryAttempt, of task: ExpandedTask, page: Int?,
        captures: (([String], CaptureRule) throws -> Void)?, streamed: FileReplacement?
    ) -> AttemptResult {
        var result = AttemptResult()
        switch attempt.outcome {
        case .success(let response) where task.accepts(response.status):
            // The status is right: the rest of `expect`, the captures, then the save.
            if let reason = task.expectation.failure(
                for: response, durationMs: attempt.duration * 1000)
            {
                var message = reason
                if let stop = attempt.stopReason { message += "; \(stop)" }
                result.failure = ("expectation", message)
            } else if let captures,
                let problem = takeCaptures(of: task, from: response, into: captures)
            {
                result.failure = ("capture", problem)
            } else if response.status == 304 {
                // Not Modified has no body: the saved output stays as it is.
                result.notModified = true
                result.ok = true
            } else if var save = task.save {
                if let page { save = save.replacingOccurrences(of: "{page}", with: String(page)) }
                do {
                    result.savedTo = try self.save(response, to: save, streamed: streamed)
                    result.ok = true
                } catch {
                    result.failure = ("save", "cannot save to \(job.outputDir)/\(save): \(error)")
                }
            } else {
                result.ok = true
            }
        case .success(let response):
            let expected =
                task.expectStatus.map { $0.sorted().map(String.init).joined(separator: ", ") }
                ?? "2xx"
            var message = "status \(response.status), expected \(expected)"
            if let reason = attempt.stopReason { message += "; \(reason)" }
            result.failure = ("unexpectedStatus", message)
        case .failure(let error):
            result.failure = (error.kind.rawValue, error.message)
        }
        return result
    }

    /// Puts a saved output in place under `outputDir`: the streamed file renamed over it, or
    /// the body in memory written; returns the path as logged.
    private func save(
        _ response: HTTPResponse, to path: String, streamed: FileReplacement?
    ) throws -> String {
        if let streamed, response.savedBody != nil {
            try streamed.commit()
        } else {
            let folder = URL(fileURLWithPath: job.outputDir)
            guard let url = OutputPath.resolve(path, in: folder) else {
                throw OutputPathError(path: path)
            }
            temporaries.sweep(url.deletingLastPathComponent())
            try OutputFile.write(response.body, to: url)
        }
        return (job.outputDir as NSString).appendingPathComponent(path)
    }
}

/// A `save` path that would leave the output folder.
struct OutputPathError: Error, CustomStringConvertible {
    let path: String
    var description: String { "\"\(path)\" escapes outputDir" }
}

/// Prints the first task failures to stderr, `--quiet` or not, so that cron mails them (all of
/// them are in the log).
final class FailureReporter: Sendable {
    private let console: Console
    private let printed = Locked(0)
    /// Set when a progress line is on the terminal: each message first clears it, so that
    /// it is not printed over the line's tail (the next tick draws the line again).
    private let clearsLine: Bool
    static let limit = 10

    init(console: Console, clearsLine: Bool = false) {
        self.console = console
        self.clearsLine = clearsLine
    }

    func report(_ message: String) {
        let count = printed.withLock { value -> Int in
            value += 1
            return value
        }
        let clear = clearsLine ? "\r\u{1B}[K" : ""
        if count <= Self.limit {
            console.error(clear + "courier: " + message.showingControlCharacters)
        } else if count == Self.limit + 1 {
            console.error(clear + "courier: more failures; see the log")
        }
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
