import Courier
import Foundation

/// `courier replay LOG... [--job JOB.json] [--all] [--status …] [--error-kind …] [--task GLOB]
/// [--base-url URL] [--header 'Name: value'] [--pace asap|logged] [--speed X] [--dry-run] [--format plan|curl]
/// [--backend …] [--concurrency N] [--log-dir DIR] [--quiet] [--no-progress]`
enum ReplayCommand {
    static let usage = """
        Usage: courier replay LOG.jsonl... [--job JOB.json] [--all] [--status 5xx,429]
                              [--error-kind timeout,connect] [--task GLOB] [--base-url URL]
                              [--header 'Name: value']
                              [--pace asap|logged] [--speed X] [--dry-run] [--format plan|curl]
                              [--backend curl|urlsession] [--concurrency N] [--log-dir DIR]
                              [--quiet] [--no-progress]
        Re-sends the tasks whose final outcome in the given logs (- is stdin) is not ok, and
        logs them with replayOf.
          --job          the job the logs came from: each task is rebuilt from it and run as
                         the job runs it (saves, expectations, conditional state, fan-out
                         children from their parent's kept captures or fresh ones, pages from
                         the page after a paginated task's checkpoint, else from page 1);
                         with no LOG, the job's history is read. Without it, the
                         logged requests are re-sent as logged, and nothing is saved
          --all          every task, ok ones included
          --status, --error-kind
                         only tasks that ended with one of these statuses or error kinds
          --task GLOB    only task ids that match
          --base-url URL with --job: the job's baseURL, as `run --base-url` (default: the
                         one the replayed run was sent to, if it had one)
          --header       a value for a header the log redacted (repeatable)
          --pace logged  keep the logged gaps between requests, divided by --speed (default 1)
          --dry-run      print what would be sent (--format plan, or curl commands) and send nothing
          --format       plan or curl: prints what would be sent, as --dry-run, and sends nothing
        Exit codes: as `run`; 2 also when a log cannot be read or holds no log line, or no
        request could be rebuilt.
        """

    struct Options {
        var logs: [String] = []
        var jobPath: String?
        var filter = ReplayFilter()
        var headers: [(name: String, value: String)] = []
        var paced = false
        var speed = 1.0
        var dryRun = false
        var curlFormat = false
        var run = RunOptions()
        /// Whether `--log-dir` named the log folder; else it is the job's home's `logs/`, or
        /// for a replay without `--job`, the folder of the logs replayed.
        var logDirectoryGiven = false
        /// `--base-url`, or the one the replayed run was sent to (its `run.start`).
        var baseURL: String?
        /// Standard input's lines, copied for the logs' readings (`-` among ``logs``).
        var standardInput: StandardInputSpool?
    }

    static func run(_ arguments: [String]) async -> Int32 {
        var options: Options
        switch ArgumentParser.parse(arguments, command: "replay", usage: usage, parse) {
        case .options(let parsed): options = parsed
        case .exit(let status): return status
        }
        do {
            options.standardInput = try StandardInputSpool.spooling(&options.logs)
        } catch {
            Console.error("courier: cannot read the logs from standard input: \(error)")
            return CommandLineInterface.ExitCode.usage
        }
        defer { options.standardInput?.remove() }
        var job: Job?
        if let path = options.jobPath {
            guard let loaded = loadJob(path, options: options),
                !refusesOtherJobFile(loaded, options: options)
            else { return CommandLineInterface.ExitCode.usage }
            job = loaded
        }
        let secrets = (job?.secrets ?? []).union(options.headers.map(\.value)).union(
            OTLPEnvironment(ProcessInfo.processInfo.environment).headers.map(\.value))
        let console = Console(redactor: Redactor(secrets: secrets))
        if !options.dryRun { options.run.trace = traceSettings(of: job, console: console) }
        // Logs named on the command line may leave out what the job's history did since.
        let logsNamed = !options.logs.isEmpty
        if let job, !historyLogs(of: job, options: &options, console: console) {
            return CommandLineInterface.ExitCode.usage
        }
        if let path = options.jobPath,
            let code = loggedSettings(&job, path: path, options: &options, console: console)
        {
            return code
        }
        guard let history = readHistory(options.logs, job: job, options: options, console: console)
        else { return CommandLineInterface.ExitCode.usage }
        guard
            let (selected, jobNames) = select(
                history, job: job, options: &options, console: console)
        else { return CommandLineInterface.ExitCode.usage }
        warnIfCut(history, options: options, console: console)
        guard !selected.isEmpty else {
            return nothingToReplay(history, options: options, console: console)
        }
        // A write the logs (or the job's history beside them) say was answered, or whose
        // outcome they leave unknown, is sent again only as ``WriteRule`` allows.
        options.run.writes = writes(
            of: history, job: job, jobNames: jobNames, logsNamed: logsNamed, options: options)

        guard logIn(history, job: job, jobNames: jobNames, options: &options, console: console)
        else { return CommandLineInterface.ExitCode.usage }
        if let job, !options.dryRun {
            if let refusal = OldHome.refusal(for: job, logDirectoryGiven: options.logDirectoryGiven)
            {
                console.error("courier: \(job.name): \(refusal)")
                return CommandLineInterface.ExitCode.usage
            }
            var options = options
            // A replay's records files take the parts its logs' runs left for the tasks they
            // did, besides its own (``RecordsCommit``).
            // Not those kept before a later run wrote their file: they would undo it.
            options.run.history = RunCommand.freshened(
                RunHistory(history, logs: options.logs), of: job, console: console,
                replaying: options.logs)
            return await replayFromJob(
                job, selected: selected, runs: history.runs, settled: history.done,
                options: options, console: console)
        }

        return await replayFromLogs(
            selected, job: job, jobNames: jobNames, replayOf: history.runs,
            okRuns: history.okRuns, options: options, console: console, secrets: secrets)
    }

    /// The job `--job` names, validated; `nil` (its errors printed) when it is not valid or
    /// asks what `--backend urlsession` cannot do.
    static func loadJob(_ path: String, options: Options, window: WindowOverride? = nil) -> Job? {
        let job: Job
        do {
            job = try JobDecoder.load(
                URL(fileURLWithPath: path), baseURL: options.baseURL, window: window)
            _ = try JobValidator.validate(job)
        } catch {
            for line in error.errors { Console.error("courier: \(line)") }
            return nil
        }
        if let reason = job.backendRefusal(options.run.backend) {
            Console.error("courier: \(reason); nothing was sent")
            return nil
        }
        return job
    }

    /// The job's tasks `wanted` names, built from the job: its expansion, and the fan-out
    /// children built from the values their producers' runs kept, as the replay builds them.
    static func jobTasks(of job: Job, wanted: Set<String>, okRuns: [UInt64: String])
        -> [String: ExpandedTask]
    {
        var tasks: [String: ExpandedTask] = [:]
        for case .success(let task) in TaskExpander(job: job) where wanted.contains(task.id) {
            tasks[task.id] = task
        }
        let children = wanted.subtracting(tasks.keys)
        guard !children.isEmpty else { return tasks }
        return tasks.merging(
            ResumePlan.tasksWithKeptCaptures(
                job, wanted: children, okRuns: okRuns, redactor: Redactor(secrets: job.secrets))
        ) { old, _ in old }
    }

    /// A replay without `--job`, or a dry run: each request rebuilt from its logged line
    /// (``ReplayBuilder``); refusals are reported and nothing is sent for them.
    /// `okRuns`: the run of each done capturing task's `ok`, whose kept values build its
    /// fan-out children (``ResumePlan/tasksWithKeptCaptures(_:wanted:okRuns:redactor:)``).
    static func replayFromLogs(
        _ selected: [LogLine], job: Job?, jobNames: Set<String>, replayOf: [String],
        okRuns: [UInt64: String] = [:], options: Options, console: Console, secrets: Set<String>
    ) async -> Int32 {
        let jobTasks =
            job.map {
                Self.jobTasks(of: $0, wanted: Set(selected.compactMap(\.task)), okRuns: okRuns)
            } ?? [:]
        let builder = ReplayBuilder(
            job: job, jobTasks: jobTasks, overrides: options.headers,
            redactor: Redactor(secrets: job?.secrets ?? []))
        let producers = (options.dryRun ? job : nil).map {
            ReplayProducerPlan(
                job: $0, chosen: Set(selected.compactMap(\.task)), okRuns: okRuns,
                writes: options.run.writes, named: options.run.named,
                chosenTasks: Array(jobTasks.values))
        }
        let prefix = options.curlFormat ? "# " : ""
        // A bash script (trial CCC: `sh retry.sh` failed on its loops), which stops at a
        // variable not set rather than send an empty credential; its first line before any
        // note (trial III: a held write's comment came first, and exec refused the file).
        if options.curlFormat { console.output("#!/usr/bin/env bash\nset -u") }
        for (id, reason) in producers?.held ?? [] {
            console.output("\(prefix)\(id)\t(not sent: \(reason))".showingControlCharacters)
        }
        var tasks: [ExpandedTask] = []
        var (refused, pending, rebuilt, noted) = (0, 0, 0, 0)
        var refusals = ReplayBuilder.Refusals()
        let firstTime = selected.first?.time ?? 0
        for line in selected {
            switch plan(
                line, builder: builder, jobTasks: jobTasks, job: job, producers: producers,
                options: options)
            {
            case .send(var task):
                if options.paced { task.sendAt = (line.time - firstTime) / options.speed }
                tasks.append(task)
            case .note(let text, let sent, let again):
                noted += 1
                if sent { pending += 1 }
                if again { rebuilt += 1 }
                console.output("\(prefix)\(line.task ?? "?")\t\(text)".showingControlCharacters)
            case .refused(let refusal):
                refused += 1
                refusals.add(refusal, console: console)
            }
        }
        refusals.finish(console: console)
        // A dry run whose lines are all said above (writes held) has its plan: "nothing
        // could be rebuilt" and exit 2 said a wrong path to cron (trial AAA).
        guard !tasks.isEmpty || (options.dryRun && (job != nil || noted > 0)) else {
            console.error("courier: no request could be rebuilt; nothing sent")
            return CommandLineInterface.ExitCode.usage
        }

        if options.dryRun {
            return dryRun(
                tasks, selected: selected, job: job, jobTasks: jobTasks, again: producers?.again,
                counts: (pending, rebuilt, refused), options: options, console: console,
                secrets: secrets)
        }
        let replayJob = syntheticJob(name: jobNames.first ?? "replay", secrets: secrets)
        var options = options
        // Its `run.end` and exit code count them, as the summary does (trial S: exit 1 from
        // a log whose run.end said 0).
        options.run.refusedReplays = refused
        let runner = JobRunner(
            job: replayJob, options: options.run, total: tasks.count,
            source: .replay(tasks, replayOf: replayOf))
        return await finish(
            runner, job: replayJob, refused: refused, options: options, console: console)
    }

    /// Trace context as a run has it: the job's `"trace"` (with `--job`), `TRACEPARENT`, an
    /// OTLP endpoint of the environment.
    private static func traceSettings(of job: Job?, console: Console) -> TraceSettings? {
        RunCommand.traceSettings(
            asked: job?.trace ?? false, environment: ProcessInfo.processInfo.environment,
            console: console)
    }

    /// Why a dry run's selected task would not be sent, when it is a write the history says
    /// must not be sent again (``WriteRule``, as the run decides it).
    static func held(_ line: LogLine, built: ExpandedTask?, job: Job?, options: Options) -> String?
    {
        guard let writes = options.run.writes else { return nil }
        if let job, let built {
            return WriteRule.held(built, in: job, writes: writes, named: options.run.named)
        }
        return WriteRule.held(logged: line, writes: writes, named: options.run.named)
    }

    /// A replay with `--job`: the selected tasks are found again in the job's expansion and
    /// run as the job runs them (``ReplaySelection``). A task the job no longer builds is
    /// refused with its reason, and the replay exits 1.
    static func replayFromJob(
        _ job: Job, selected: [LogLine], runs: [String], settled: Set<UInt64>, options: Options,
        console: Console
    ) async -> Int32 {
        if let refusal = ConditionalState.refusal(for: job) {
            console.error("courier: \(job.name): \(refusal)")
            return CommandLineInterface.ExitCode.usage
        }
        let selection = ReplaySelection(
            job: job.name, lines: selected, overrides: options.headers,
            pace: options.paced ? options.speed : nil,
            settled: options.filter.all ? [] : settled)
        let runner = JobRunner(
            job: job, options: options.run, total: selection.count,
            source: .selection(selection, replayOf: runs))
        return await finish(
            runner, job: job, refused: 0, options: options, console: console,
            unmatched: { selection.unmatched })
    }

    /// Runs the replay and prints its summary; `unmatched` names the selected tasks the run
    /// never found.
    private static func finish(
        _ runner: JobRunner, job: Job, refused: Int, options: Options, console: Console,
        unmatched: () -> [String] = { [] }
    ) async -> Int32 {
        do {
            let summary = try await runner.run()
            await RunCommand.exportTrace(summary, job: job, options: options.run, console: console)
            var refused = refused
            if summary.interruptedBy == nil {
                for id in unmatched() {
                    if isDoneWindow(id, of: job) {
                        console.error("courier: \(doneWindowNote(id))".showingControlCharacters)
                        continue
                    }
                    refused += 1
                    console.error(
                        "courier: task \(id): the job no longer builds this task (its spec or its parent's values changed, or a task it needs failed this time: see above); not replayed"
                            .showingControlCharacters)
                }
            }
            if !options.run.quiet || summary.exitCode != 0 || refused > 0 {
                // A replay of logs alone decides nothing in the job's history (docs/log-format.md):
                // the logs it replayed still hold the failures, and replaying them again is its
                // repair (its own log, replayed, finds nothing).
                // `--header` values are secrets: their names, with the value to give again.
                let headers = options.headers.map { " --header '\($0.name): …'" }.joined()
                // Standard input stays `-`, with the same lines piped in again: the pipe is
                // not kept, and `courier replay -` pasted alone waits on the terminal, or
                // under cron reads nothing and ends 0 (trial TTT).
                let piped = options.logs.contains { options.standardInput?.named($0) == "-" }
                let repair =
                    options.jobPath == nil
                    ? (piped ? "… | courier replay " : "courier replay ")
                        + options.logs.map {
                            options.standardInput?.named($0) == "-"
                                ? "-"
                                : ShellWord.quoted(
                                    URL(fileURLWithPath: $0).standardizedFileURL.path)
                        }
                        .joined(separator: " ")
                        + options.filter.arguments.map { " " + ShellWord.quoted($0) }.joined()
                        + headers
                    : nil
                // "1 ok" of a failed page read as the listing done (trial U).
                let note =
                    options.jobPath == nil && summary.requests > 0
                    ? "from the log alone: nothing saved, and the job's history does not count it"
                    : nil
                var text = RunCommand.describe(summary, job: job, repair: repair, note: note)
                if refused > 0 { text += "; \(refused) refused" }
                console.output(text)
            }
            return summary.exitCode
        } catch {
            console.error("courier: \(job.name): \(error)")
            if case .locked = error { return CommandLineInterface.ExitCode.locked }
            return CommandLineInterface.ExitCode.usage
        }
    }

    /// The log folder the replayed logs sit in, when the first is in `<folder>/<job>/`.
    static func historyFolder(of logs: [String], job: String) -> URL? {
        guard let first = logs.first, first != "-" else { return nil }
        // A log file in `logs/<job>/`, or that folder itself (a trial's replay of
        // `logs/nightly/` wrote its log under the working folder).
        var isFolder: ObjCBool = false
        var folder = URL(fileURLWithPath: first)
        if !(FileManager.default.fileExists(atPath: first, isDirectory: &isFolder)
            && isFolder.boolValue)
        {
            folder = folder.deletingLastPathComponent()
        }
        guard folder.lastPathComponent == job else { return nil }
        return folder.deletingLastPathComponent()
    }

    /// A job for a replay without `--job`: the log's job name, default limits, no saves.
    static func syntheticJob(name: String, secrets: Set<String>) -> Job {
        Job(
            name: name, baseURL: nil, backend: .curl, concurrency: 8, rateLimit: nil, timeout: 30,
            retry: RetryPolicy(), headers: [], auth: nil, cookies: false,
            outputDir: "out/\(name)", tasks: [], file: URL(fileURLWithPath: "-"), sha256: "",
            secrets: secrets)
    }
}
