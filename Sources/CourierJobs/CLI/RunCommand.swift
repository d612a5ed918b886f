import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run JOB.json [--backend …] [--concurrency N] [--log-dir DIR|-] [--shard I/N]
/// [--resume [LOG…]] [--http2] [--ping-url URL] [--metrics-file FILE [--metrics-interval S]]
/// [--dry-run] [--deadline DURATION] [--grace DURATION] [--quiet] [--no-progress] [--json]`
enum RunCommand {
    static let usage = """
        Usage: courier run JOB.json [--backend curl|urlsession] [--concurrency N] [--log-dir DIR|-]
                                    [--shard I/N] [--resume [LOG.jsonl...]]
                                    [--fresh-if-no-history] [--http2]
                                    [--ping-url URL] [--metrics-file FILE [--metrics-interval S]]
                                    [--dry-run] [--deadline DURATION] [--grace DURATION]
                                    [--base-url URL] [--task GLOB] [--quiet] [--no-progress]
                                    [--json]
        Validates the job, then runs its tasks and writes one JSON line per request attempt to
        DIR/<job name>/<time>-<run id>.jsonl. A job's home is its file's folder, whatever the
        working folder: DIR defaults to logs/ there, and its relative paths (outputDir, lines,
        bodyFile, tls files) are taken from there. A JOB.json of - is read from stdin; its home
        is the working folder.
          --log-dir -    write the JSON lines to stdout (the summary goes to stderr)
          --shard I/N    run only the tasks whose id hashes to shard I of N (0 <= I < N); logs
                         and the lock carry the shard. Defaults to JOB_COMPLETION_INDEX of
                         JOB_COMPLETIONS when both are set (a Kubernetes Indexed Job)
          --resume       skip the tasks the job's history says are done: its latest run (every
                         shard's), and the resumes and replays since; or the LOGs given, and
                         the logs they resumed from. Works on the log of a killed run. With
                         no history in DIR/<job name> it refuses (exit 2), unless
                         --fresh-if-no-history says to run every task then
          --http2        offer HTTP/2 and multiplex each host's requests over one connection
                         where the server agrees (over TLS; curl backend), as "http2": true
          --ping-url URL a healthchecks.io check: POST URL/start at the start and URL/<exit
                         code> at the end, the summary line as the body (replaces the job's
                         "notify"); 10 s at most per ping, never changing the exit code. The
                         URL is a secret, never written; a command line is visible to other
                         users, so prefer "notify": {"ping": "${env:NAME}"} in the job
          --metrics-file FILE
                         write the run's figures in Prometheus text format to FILE (for
                         node_exporter's textfile collector), replaced atomically every
                         --metrics-interval seconds (15) and at the end
          --base-url URL the job's baseURL, in place of the file's: the same job against
                         another server (a staging copy, a local recording), unedited
          --task GLOB    only the tasks whose id matches (repeatable; 'user-*'), and the tasks
                         they need (those that capture their inputs, unless an earlier run
                         kept what they captured); the run joins the job's history, as a
                         replay does, and never starts it afresh
          --dry-run      print the expanded tasks and send nothing
          --deadline     stop the whole run after DURATION (90s, 30m, 2h, 1h30m; seconds when
                         bare) as SIGTERM does: no new task starts, those in flight have the
                         grace period, exit 143 (0 or 1 when it cut nothing: every task had
                         started and ended within the grace); overrides the job's "deadline"
          --grace        how long requests in flight may go on after SIGTERM, SIGINT or the
                         deadline before they are cancelled (DURATION, 5s by default; 0s
                         cancels at once); a second signal cancels at once whatever it says
          --quiet        print nothing when every task succeeds (failures still go to stderr)
          --no-progress  no live progress line on stderr
          --json         print the summary as one JSON object on stdout (on stderr with
                         --log-dir -), even with --quiet: {"job", "shard", "tasks": {"total",
                         "ok", "failed", "notModified", "alreadyDone", "notRun"}, "requests",
                         "durationMs", "exitCode", "interrupted", "stoppedBy" (null, "SIGINT",
                         "SIGTERM", "deadline"), "log" (null with --log-dir -), "logIncomplete" (null or
                         why), "missing" (after --resume: tasks the history lacks, else null)};
                         a refusal (exit 2 or 3) prints {"jobFile", "exitCode", "refused"
                         ("usage" or "locked"), "errors" (the lines stderr has)} instead
        Exit codes: 0 ok, 1 some task failed, 2 bad usage or job file (nothing sent),
        3 another run of the job holds its lock, 130/143 interrupted by SIGINT/SIGTERM.
        """

    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.contains("--json") else { return await runCommand(arguments) }
        // A refusal prints no summary: with --json, its reasons come as one JSON object on
        // stdout (stderr has them as lines too), so that `courier run … --json | jq` always
        // has a value to read.
        let lines = Locked<[String]>([])
        let status = await Console.$errorLines.withValue(lines) { await runCommand(arguments) }
        if status == CommandLineInterface.ExitCode.usage
            || status == CommandLineInterface.ExitCode.locked
        {
            let errors = lines.withLock { $0 }.map { line -> JSONWriter.Value in
                .string(line.hasPrefix("courier: ") ? String(line.dropFirst(9)) : line)
            }
            let logOnStdout = Self.logsToStandardOutput(arguments)
            // The job file: the first operand that is not an option's value.
            let values: Set<String> = [
                "--log-dir", "--backend", "--concurrency", "--shard",
                "--ping-url", "--metrics-file", "--metrics-interval", "--deadline", "--grace",
                "--base-url",
            ]
            let jobFile = arguments.indices.first { index in
                let argument = arguments[index]
                let isValue = index > 0 && values.contains(arguments[index - 1])
                return !isValue && (argument == "-" || !argument.hasPrefix("-"))
            }.map { arguments[$0] }
            let refusal: JSONWriter.Value = .object([
                ("jobFile", jobFile.map { .string($0) } ?? .null),
                ("exitCode", .int(Int(status))),
                (
                    "refused",
                    .string(status == CommandLineInterface.ExitCode.locked ? "locked" : "usage")
                ),
                ("errors", .array(errors)),
            ])
            if logOnStdout {
                Console.error(JSONWriter.string(refusal))
            } else {
                Console.output(JSONWriter.string(refusal))
            }
        }
        return status
    }

    /// Whether the arguments send the log to stdout (`--log-dir -` or `--log-dir=-`): a job
    /// read from stdin (`courier run - --log-dir logs`) does not.
    static func logsToStandardOutput(_ arguments: [String]) -> Bool {
        zip(arguments, arguments.dropFirst()).contains { $0 == "--log-dir" && $1 == "-" }
            || arguments.contains("--log-dir=-")
    }

    /// `courier run` itself; ``run(_:)`` adds the JSON object of a refusal.
    private static func runCommand(_ arguments: [String]) async -> Int32 {
        var arguments = arguments
        // The ping URL is a secret from the start: no message, a usage error's included,
        // may show it.
        let pingSecrets = pingURLArguments(arguments).reduce(into: Set<String>()) {
            $0.formUnion(NotifySettings(ping: $1).secrets)
        }
        let usageConsole = Console(redactor: Redactor(secrets: pingSecrets))
        // `--resume` takes an optional LOG: the next argument when it names a .jsonl file.
        var resumeLogs: [String] = []
        var resume = false
        if let index = arguments.firstIndex(where: { $0 == "--resume" || $0.hasPrefix("--resume=") }
        ) {
            resume = true
            if arguments[index].hasPrefix("--resume=") {
                resumeLogs = [String(arguments[index].dropFirst("--resume=".count))]
            } else {
                while index + 1 < arguments.count, arguments[index + 1].hasSuffix(".jsonl") {
                    resumeLogs.append(arguments.remove(at: index + 1))
                }
            }
            arguments.remove(at: index)
        }
        var parser = ArgumentParser(arguments, command: "run")
        var options: RunOptions
        let jobPath: String
        let dryRun: Bool
        var freshIfNoHistory = false
        var logDirectoryGiven = false
        let json: Bool
        var baseURL: String?
        var only: [String] = []
        var pingURL: String?
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            var parsed = RunOptions()
            if let name = try parser.option("--backend") {
                guard let backend = Backend(rawValue: name) else {
                    throw UsageError("run: --backend expects curl or urlsession, got '\(name)'")
                }
                parsed.backend = backend
            }
            parsed.concurrency = try parser.optionalInteger("--concurrency", range: 1...10_000)
            parsed.http2 = parser.flag("--http2")
            parsed.deadline = try parser.duration("--deadline")
            baseURL = try parser.option("--base-url")
            if let text = baseURL, let problem = HARImport.baseURLProblem(text) {
                throw UsageError("run: --base-url \(problem), got '\(text)'")
            }
            if let grace = try parser.duration("--grace", allowZero: true) {
                parsed.gracePeriod = grace
            }
            if let folder = try parser.option("--log-dir") {
                if folder == "-" {
                    parsed.logToStandardOutput = true
                } else {
                    parsed.logDirectory = URL(fileURLWithPath: folder)
                }
                logDirectoryGiven = true
            }
            if let text = try parser.option("--shard") {
                guard let shard = Shard(text) else {
                    throw UsageError(
                        "run: --shard expects I/N with 0 <= I < N <= \(Shard.maximumCount), got '\(text)'"
                    )
                }
                parsed.shard = shard
            } else {
                parsed.shard = try shardFromEnvironment(ProcessInfo.processInfo.environment)
            }
            if let text = try parser.option("--ping-url") {
                guard Origin.httpURL(text) != nil else {
                    throw UsageError(
                        "run: --ping-url expects an absolute http or https URL (not shown: a ping URL is a secret)"
                    )
                }
                pingURL = text
            }
            parsed.metrics = try metricsSettings(&parser)
            dryRun = parser.flag("--dry-run")
            freshIfNoHistory = parser.flag("--fresh-if-no-history")
            parsed.quiet = parser.flag("--quiet")
            parsed.progress = !parser.flag("--no-progress")
            json = parser.flag("--json")
            only = try parser.all("--task")
            if only.contains(where: \.isEmpty) {
                throw UsageError("run: --task expects a task id or glob")
            }
            if let text = ProcessInfo.processInfo.environment["COURIER_CAPTURE_MEMORY"],
                let limit = Int(text), limit > 0
            {
                parsed.captureMemoryLimit = limit
            }
            if let text = ProcessInfo.processInfo.environment["COURIER_RECORDS_RUN_BYTES"],
                let limit = Int(text), limit > 0
            {
                parsed.recordsRunBytes = limit
            }
            jobPath = try parser.positional("JOB.json")
            try parser.finish()
            options = parsed
        } catch {
            usageConsole.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }

        var job: Job
        let total: Int
        do {
            job = try JobDecoder.load(argument: jobPath, baseURL: baseURL)
            total = try JobValidator.validate(job)
        } catch {
            for line in error.errors { usageConsole.error("courier: \(line)") }
            if let pingURL {
                // Nothing ran: the check hears of it now rather than when the pings stop.
                let count = error.errors.count
                await pingRefusal(
                    NotifySettings(ping: pingURL), job: jobPath, backend: options.backend ?? .curl,
                    console: usageConsole,
                    reason:
                        "not a valid job (\(count) problem\(count == 1 ? "" : "s"), the first: \(error.errors.first.map { "\($0)" } ?? "?"))"
                )
            }
            return CommandLineInterface.ExitCode.usage
        }
        if let pingURL {
            // Replaces the job's own notify; a secret like every ping URL.
            job.notify = NotifySettings(ping: pingURL)
            job.secrets.formUnion(pingSecrets)
        }
        if options.http2 { job.http2 = true }
        let console = Console(redactor: Redactor(secrets: job.secrets))
        if let shard = options.shard, let spec = job.tasks.first(where: { $0.records != nil }) {
            Console.error(
                "courier: \(job.file.relativePath): \(spec.path).records: a sharded run (shard \(shard)) cannot write records: a records file changes only once every task that writes it is done, and one shard cannot know that of the others; run the job without --shard (or JOB_COMPLETION_INDEX); nothing was sent"
            )
            return CommandLineInterface.ExitCode.usage
        }
        if options.backend == .urlsession, let asked = job.curlOnlySettings {
            let reason =
                "--backend urlsession: the job asks for \(asked), which the urlsession backend cannot do"
            console.error("courier: \(reason); nothing was sent")
            await pingRefusal(job, backend: .curl, console: console, reason: reason)
            return CommandLineInterface.ExitCode.usage
        }
        warnAboutShortSecrets(job, console: console)
        if (options.backend ?? job.backend) == .urlsession, isatty(STDERR_FILENO) == 1 {
            // On a terminal only: cron mails whatever a job prints on stderr, every night.
            console.error(
                "courier: note: on the urlsession backend a hostile or broken server can end the process (FoundationNetworking traps on a chunked body with trailers and on a connection closed inside the header block); use the curl backend against servers you do not trust (docs/transports.md)"
            )
        }
        if !logDirectoryGiven { options.logDirectory = job.home.logs }
        if let refusal = OldHome.refusal(for: job, logDirectoryGiven: logDirectoryGiven) {
            if dryRun {
                console.error("courier: \(job.name): warning: \(refusal)")
            } else {
                console.error("courier: \(job.name): \(refusal)")
                await pingRefusal(job, backend: options.backend, console: console, reason: refusal)
                return CommandLineInterface.ExitCode.usage
            }
        }
        if resume {
            let logs = resumeLogs.map { URL(fileURLWithPath: $0) }
            for log in logs where !FileManager.default.fileExists(atPath: log.path) {
                console.error("courier: --resume: \(log.relativePath): no such log")
                await pingRefusal(
                    job, backend: options.backend, console: console,
                    reason: "--resume: \(log.relativePath): no such log")
                return CommandLineInterface.ExitCode.usage
            }
            let warn: (String) -> Void = { console.error("courier: \($0)") }
            let capturing = TaskHistory.capturingTasks(of: job)
            if !logs.isEmpty {
                options.resume = LogFiles.resumeState(
                    from: logs, keepRunsOf: capturing, warn: warn)
            } else {
                // The job's one history: its latest plain run (every shard's) and the resumes
                // and replays since (docs/log-format.md, "One history per job").
                let folder = options.logDirectory.appendingPathComponent(job.name)
                let history = JobHistory.read(folder: folder)
                if history.logs.isEmpty, !freshIfNoHistory {
                    // A repair that finds nothing to repair must not pass for one: run from
                    // another folder, it would fetch everything into the wrong place and say
                    // "every task done".
                    let reason =
                        "--resume: no earlier run of this job in \(folder.path); nothing was sent (run without --resume to start fresh, or add --fresh-if-no-history)"
                    console.error("courier: \(job.name): \(reason)")
                    await pingRefusal(
                        job, backend: options.backend, console: console, reason: reason)
                    return CommandLineInterface.ExitCode.usage
                } else if history.logs.isEmpty {
                    console.error(
                        "courier: \(job.name): no earlier run in \(folder.path); running every task (--fresh-if-no-history)"
                    )
                } else {
                    let folded = TaskHistory.read(
                        history.logs, keepRunsOf: capturing, warn: warn)
                    options.resume = ResumeState(
                        done: folded.done, logs: history.logs, runs: folded.runs,
                        okRuns: folded.okRuns)
                }
            }
        }
        options.history = options.resume.map {
            RunHistory(runs: $0.runs, done: $0.done, okRuns: $0.okRuns)
        }
        if !only.isEmpty {
            options.only = only
            // What the history kept of the tasks that capture saves sending them again.
            if options.history == nil, !options.logToStandardOutput {
                let logs = JobHistory.read(
                    folder: options.logDirectory.appendingPathComponent(job.name)
                ).logs
                let folded = TaskHistory.read(
                    logs, keepRunsOf: TaskHistory.capturingTasks(of: job), warn: { _ in })
                options.history = RunHistory(
                    runs: folded.runs, done: folded.done, okRuns: folded.okRuns)
            }
        }
        if dryRun {
            // The plan shows what the next run would send: `{since}` from the kept cursors,
            // read as the run reads them (nothing is written, no lock is taken).
            var planned = job
            if job.tasks.contains(where: { $0.since != nil }) {
                let url = SinceState.location(outputDir: job.outputDir)
                switch SinceState.load(url) {
                case .success(let cursors): planned.sinceCursors = cursors
                case .failure(let problem):
                    console.error(
                        "courier: \(job.name): warning: \(url.relativePath): \(problem.reason); the plan shows every since task from its start value, as the run would"
                    )
                }
            }
            if let resume = options.resume {
                ResumePlan.print(planned, resume: resume, options: options, console: console)
            } else {
                printPlan(planned, total: total, options: options, console: console)
            }
            return CommandLineInterface.ExitCode.success
        }
        // Before the lock and the log: a refusal sends nothing and writes nothing.
        if let refusal = ConditionalState.refusal(for: job) {
            console.error("courier: \(job.name): \(refusal)")
            await pingRefusal(job, backend: options.backend, console: console, reason: refusal)
            return CommandLineInterface.ExitCode.usage
        }
        if job.notify != nil {
            let summaryOptions = options
            let summaryJob = job
            options.summaryLine = { summary in
                var summary = summary
                if summaryOptions.resume != nil, !summaryOptions.logToStandardOutput {
                    summary.missing = missing(
                        in: summaryOptions.logDirectory.appendingPathComponent(summaryJob.name))
                }
                return describe(summary, job: summaryJob, shard: summaryOptions.shard)
            }
        }
        do {
            let selection = only.isEmpty ? nil : ReplaySelection(job: job.name, globs: only)
            let runner =
                selection.map {
                    JobRunner(
                        job: job, options: options, total: 0,
                        source: .selection($0, replayOf: []))
                } ?? JobRunner(job: job, options: options, total: total)
            var summary = try await runner.run()
            if let unmatched = selection?.unmatched, !unmatched.isEmpty {
                for glob in unmatched {
                    console.error(
                        "courier: \(job.name): --task \(glob): no task of the job has a matching id (`courier run \(ShellWord.quoted(job.file.relativePath)) --dry-run` lists them)"
                            .showingControlCharacters)
                }
                if summary.total == 0 { return CommandLineInterface.ExitCode.usage }
            }
            #if DEBUG
                // Tests of the built binary read which file work ran on a curl loop thread.
                if let path = ProcessInfo.processInfo.environment["COURIER_DEBUG_LOOP_FILE_WORK"] {
                    let seen = LoopThreadFileWork.seen.withLock { $0 }.sorted()
                    try? Data(seen.map { $0 + "\n" }.joined().utf8).write(
                        to: URL(fileURLWithPath: path))
                }
            #endif
            if options.resume != nil, !options.logToStandardOutput, !summary.logVanished {
                summary.missing = missing(
                    in: options.logDirectory.appendingPathComponent(job.name))
            }
            if json {
                let text = JSONWriter.string(
                    RunSummaryJSON.value(
                        summary, job: job, shard: options.shard,
                        logOnStdout: options.logToStandardOutput))
                if options.logToStandardOutput {
                    console.error(text)
                } else {
                    console.output(text)
                }
            } else if !options.quiet || summary.exitCode != 0 {
                // With the log on stdout, stdout holds nothing but JSON lines.
                if options.logToStandardOutput {
                    console.error(describe(summary, job: job, shard: options.shard))
                } else {
                    console.output(describe(summary, job: job, shard: options.shard))
                }
            }
            return summary.exitCode
        } catch {
            console.error("courier: \(job.name): \(error)")
            // The run that holds the lock reports for the job: this one pings nothing.
            if case .locked = error { return CommandLineInterface.ExitCode.locked }
            await pingRefusal(
                job, backend: options.backend, console: console, reason: "\(error)")
            return CommandLineInterface.ExitCode.usage
        }
    }

    /// Every `--ping-url` value among the arguments, before they are parsed.
    static func pingURLArguments(_ arguments: [String]) -> [String] {
        var values: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix("--ping-url=") {
                values.append(String(argument.dropFirst("--ping-url=".count)))
            } else if argument == "--ping-url", index + 1 < arguments.count {
                values.append(arguments[index + 1])
            }
        }
        return values
    }

    /// `--metrics-file FILE` and `--metrics-interval SECONDS`; the file's folder must exist.
    static func metricsSettings(_ parser: inout ArgumentParser) throws(UsageError)
        -> MetricsSettings?
    {
        let interval = try parser.optionalInteger("--metrics-interval", range: 1...86_400)
        guard let path = try parser.option("--metrics-file") else {
            if interval != nil { throw UsageError("run: --metrics-interval needs --metrics-file") }
            return nil
        }
        let file = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        let folder = file.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder),
            isFolder.boolValue
        else {
            throw UsageError("run: --metrics-file: the folder \(folder) does not exist")
        }
        guard !path.hasSuffix("/"), file.lastPathComponent != "." else {
            throw UsageError("run: --metrics-file expects a file name, got '\(path)'")
        }
        return MetricsSettings(
            file: file, interval: TimeInterval(interval ?? Int(MetricsSettings.defaultInterval)))
    }

    /// A run refused before it started (exit 2): the job's failure ping says so at once.
    static func pingRefusal(_ job: Job, backend: Backend?, console: Console, reason: String) async {
        guard let notify = job.notify else { return }
        await pingRefusal(
            notify, job: job.name, backend: backend ?? job.backend, tls: job.tls, console: console,
            reason: reason)
    }

    static func pingRefusal(
        _ notify: NotifySettings, job: String, backend: Backend, tls: TLSOptions = TLSOptions(),
        console: Console, reason: String
    ) async {
        let pings = RunPings(
            settings: notify, job: job, backend: backend, tls: tls, console: console)
        await pings.ended(
            exitCode: CommandLineInterface.ExitCode.usage,
            body: "courier: \(job): \(reason); nothing was sent", log: nil)
    }

    /// The shard Kubernetes gives an Indexed Job's pod: `JOB_COMPLETION_INDEX` of
    /// `JOB_COMPLETIONS` (which the manifest sets to the Job's `completions`), or none when
    /// either is missing.
    static func shardFromEnvironment(_ environment: [String: String]) throws(UsageError) -> Shard? {
        guard let indexText = environment["JOB_COMPLETION_INDEX"],
            let countText = environment["JOB_COMPLETIONS"]
        else { return nil }
        guard let index = Int(indexText), let count = Int(countText),
            let shard = Shard(index: index, count: count)
        else {
            throw UsageError(
                "run: JOB_COMPLETION_INDEX=\(indexText) and JOB_COMPLETIONS=\(countText) are not a shard I/N with 0 <= I < N <= \(Shard.maximumCount)"
            )
        }
        return shard
    }

    /// The summary line cron mails: tasks, ok (not modified), failed, requests and time;
    /// after a resume or a replay, how many of the job's tasks its history still misses, and
    /// the command that repairs them.
    static func describe(_ summary: RunSummary, job: Job, shard: Shard? = nil) -> String {
        let name = shard.map { "\(job.name) (shard \($0))" } ?? job.name
        var text =
            "courier: \(name): \(summary.total) task\(summary.total == 1 ? "" : "s"), \(summary.ok) ok"
        if summary.notModified > 0 { text += " (\(summary.notModified) not modified)" }
        text +=
            ", \(summary.failed) failed, \(summary.requests) request\(summary.requests == 1 ? "" : "s") in \(String(format: "%.1f", summary.duration)) s"
        if summary.alreadyDone > 0 { text += " (\(summary.alreadyDone) done by earlier runs)" }
        // An interrupted run's tasks that never started are neither ok nor failed.
        let notRun = summary.total - summary.ok - summary.failed
        if summary.interruptedBy != nil, notRun > 0 { text += ", \(notRun) not run" }
        if let seconds = summary.deadlineReached {
            text += ", stopped at its deadline (\(Progress.duration(seconds)))"
        } else if let reason = summary.stopReason {
            text += ", interrupted by \(reason)"
        }
        if let missing = summary.missing {
            text +=
                missing == 0
                ? "; the job's history: every task done"
                : "; the job's history: \(missing) task\(missing == 1 ? "" : "s") not done (`\(repairCommand(job, log: summary.logURL))` runs them)"
        }
        if summary.logVanished { return text + "; the log was deleted during the run" }
        // Where the run's files went, when it saves any.
        if job.tasks.contains(where: { $0.save != nil || $0.records != nil }) {
            text += "; outputs: \(job.outputDir)"
        }
        text += "; log: \(summary.logURL.relativePath)"
        // The next step, last, where cron's mail ends: a failed or cut night is repaired by
        // running what its history lacks (a resume says it in its own words, above).
        if summary.missing == nil, summary.failed > 0 || notRun > 0 {
            text += "; to repair: \(repairCommand(job, log: summary.logURL))"
        }
        return text
    }

    /// The command that runs what the job's history lacks, from any working folder: with
    /// `--log-dir` when the run's log is not in the job's home (`log` is the run's log file).
    static func repairCommand(_ job: Job, log: URL) -> String {
        let file = job.file == JobDecoder.standardInput ? "-" : job.file.relativePath
        var command = "courier run \(ShellWord.quoted(file)) --resume"
        let folder = log.deletingLastPathComponent().deletingLastPathComponent()
        if folder.standardizedFileURL.path != job.home.logs.standardizedFileURL.path {
            command += " --log-dir \(ShellWord.quoted(folder.relativePath))"
        }
        return command
    }

    /// Says so when a secret is too short to be searched for in free text (``Redactor``):
    /// it is then redacted only where it is a secret header's whole value.
    static func warnAboutShortSecrets(_ job: Job, console: Console) {
        let short = job.secrets.filter { !$0.isEmpty && $0.utf8.count < Redactor.minimumLength }
        guard !short.isEmpty else { return }
        console.error(
            "courier: \(job.name): warning: \(short.count) secret value\(short.count == 1 ? " is" : "s are") shorter than \(Redactor.minimumLength) characters: redacted where a secret header holds it whole, but not searched for in URLs, bodies or messages (a short value would erase every such number); use a longer secret"
        )
    }

    /// How many tasks the job's history (``JobHistory``) in `folder` does not count as done.
    static func missing(in folder: URL) -> Int {
        let history = JobHistory.read(folder: folder)
        return TaskHistory.read(history.logs, warn: { _ in }).finals.count
    }

    /// How a paginated task goes on, in words: its pages are unknown before sending.
    static func describe(_ rule: PaginationRule) -> String {
        let next: String
        switch rule.next {
        case .linkHeader(let relation): next = "the Link header's rel=\(relation)"
        case .jsonURL(let pointer): next = "the URL at \(pointer)"
        case .cursor(let pointer, let parameter): next = "?\(parameter)= the cursor at \(pointer)"
        case .page(let parameter, let start): next = "?\(parameter)=\(start), \(start + 1), …"
        case .offset(let parameter, let step): next = "?\(parameter)=0, \(step), …"
        case .headerURL(let name): next = "the URL in the \(name) header"
        case .headerParameter(let name, let parameter):
            next = "?\(parameter)= the \(name) header's value"
        }
        let stop = rule.stopWhenEmpty.map { " until \($0) is empty" } ?? ""
        return "(pages by \(next)\(stop), at most \(rule.maxPages))"
    }

    /// The expanded tasks, one per line, secrets scrubbed and control characters shown as
    /// `\u{1B}` (a task id from a lines file must not drive the terminal); nothing is sent. A task that fans
    /// out over a capture is one line saying so: its values come only while running.
    static func printPlan(_ job: Job, total: Int, options: RunOptions, console: Console) {
        var shown = 0
        /// Fan-out lines for the specs before `end` not shown yet.
        func fanOuts(upTo end: Int) -> Bool {
            while shown < end {
                let spec = job.tasks[shown]
                shown += 1
                guard let source = spec.captureSource else { continue }
                // `--task`: a fan-out whose ids could match one of the globs.
                let shape = ReplaySelection.glob(spec.id)
                if !options.only.isEmpty,
                    !options.only.contains(where: {
                        fnmatch(shape, $0, 0) == 0 || fnmatch($0, spec.id, 0) == 0
                    })
                {
                    continue
                }
                let producer = job.tasks.first {
                    $0.captures.contains { $0.name == source.capture }
                }
                var line =
                    "\(spec.id) for each of \(source.capture) (captured by \(producer?.path ?? "?"))\t\(spec.method) \(describe(spec.target, baseURL: job.baseURL))\(describe(spec.query))"
                // Where each child's output lands, as its template says.
                if let save = spec.save {
                    line += "\t-> \(job.outputDir)/\(Template.restoringBraces(save))"
                }
                line += notes(spec)
                guard console.output(line.showingControlCharacters) else { return false }
            }
            return true
        }
        var inShard = 0
        for case .success(let task) in TaskExpander(job: job) {
            // A job's expansion gives every task its spec.
            guard let index = task.specIndex, let spec = task.spec(in: job) else { continue }
            guard fanOuts(upTo: index) else { return }
            shown = max(shown, index + 1)
            let capturing = spec.hasCaptures
            if let shard = options.shard, !shard.runs(taskID: task.id, capturing: capturing) {
                continue
            }
            // `--task`: the chosen tasks, and those that capture what they may need.
            if !options.only.isEmpty, !capturing,
                !options.only.contains(where: { fnmatch($0, task.id, 0) == 0 })
            {
                continue
            }
            let everyShard = options.shard != nil && capturing
            inShard += 1
            var line =
                "\(task.id)\t\(task.request.method) \(task.request.displayURL.absoluteString)"
            if everyShard { line += "\t(on every shard: its captures feed each shard's children)" }
            if let rule = task.paginate { line += "\t" + describe(rule) }
            if let save = task.save { line += "\t-> \(job.outputDir)/\(save)" }
            if let records = task.records {
                line +=
                    "\t=> records \(records.rule.write.rawValue) into \(job.outputDir)/\(records.path)"
            }
            line += notes(spec)
            // A reader that went away (`| head`) ends the listing: a plan can be 10^9 lines.
            guard console.output(line.showingControlCharacters) else { return }
        }
        guard fanOuts(upTo: job.tasks.count) else { return }
        let backend = options.backend ?? job.backend
        let fanOutCount = job.tasks.filter { $0.captureSource != nil }.count
        let more =
            fanOutCount > 0
            ? " (and the fan-out of \(fanOutCount) task\(fanOutCount == 1 ? "" : "s") over captures)"
            : ""
        let children =
            job.tasks.contains { $0.captureSource != nil }
            ? ", children of fan-outs split by their own ids" : ""
        let split = options.shard.map { " (shard \($0): \(inShard) of them\(children))" } ?? ""
        console.output(
            "courier: \(job.name): \(total) task\(total == 1 ? "" : "s")\(split)\(more) on \(backend.rawValue), concurrency \(options.concurrency ?? job.concurrency); dry run, nothing sent"
        )
    }

    /// What a spec captures and waits for, for the plan.
    static func notes(_ spec: TaskSpec) -> String {
        var notes: [String] = []
        if !spec.inputs.isEmpty {
            notes.append("uses " + spec.inputs.sorted().joined(separator: ", "))
        }
        if !spec.captures.isEmpty {
            notes.append("captures " + spec.captures.map(\.name).joined(separator: ", "))
        }
        return notes.isEmpty ? "" : "\t(" + notes.joined(separator: "; ") + ")"
    }

    /// A task's `query` as its template says (`?name=value&…`), or nothing.
    static func describe(_ query: [(name: String, value: String)]) -> String {
        guard !query.isEmpty else { return "" }
        return "?"
            + query.map {
                "\(Template.restoringBraces($0.name))=\(Template.restoringBraces($0.value))"
            }
            .joined(separator: "&")
    }

    /// A task's URL as its template says, the job's base joined to a path: the whole URL a
    /// child is sent to, with its `{variables}`.
    static func describe(_ target: TaskSpec.Target, baseURL: URL?) -> String {
        switch target {
        case .path(let path):
            var base = baseURL?.absoluteString ?? ""
            if base.hasSuffix("/"), path.hasPrefix("/") { base.removeLast() }
            return base + Template.restoringBraces(path)
        case .url(let url): return Template.restoringBraces(url)
        }
    }
}
