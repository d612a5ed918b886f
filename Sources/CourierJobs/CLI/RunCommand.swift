import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run JOB.json [--backend …] [--concurrency N] [--log-dir DIR|-] [--shard I/N]
/// [--resume [LOG…]] [--http2] [--ping-url URL] [--metrics-file FILE] [--metrics-push URL]
/// [--metrics-interval S] [--trace] [--dry-run] [--deadline DURATION] [--grace DURATION] [--quiet] [--no-progress] [--json]`
enum RunCommand {
    static let usage = """
        Usage: courier run JOB.json [--backend curl|urlsession] [--concurrency N] [--log-dir DIR|-]
                                    [--shard I/N] [--resume [LOG.jsonl...]]
                                    [--fresh-if-no-history | --once-per KEY] [--http2]
                                    [--ping-url URL] [--metrics-file FILE] [--metrics-push URL]
                                    [--metrics-interval S] [--trace]
                                    [--dry-run] [--deadline DURATION] [--grace DURATION]
                                    [--base-url URL] [--task GLOB] [--window START..END]
                                    [--record DIR | --offline DIR]
                                    [--quiet] [--no-progress]
                                    [--json]
        Validates the job, then runs its tasks and writes one JSON line per request attempt to
        DIR/<job name>/<time>-<run id>.jsonl. A job's home is its file's folder, whatever the
        working folder: DIR defaults to logs/ there, and its relative paths (outputDir, lines,
        bodyFile, tls files) are taken from there. A JOB.json of - is read from stdin; its home
        is the working folder.
          --log-dir -    write the JSON lines to stdout (the summary goes to stderr)
          --shard I/N    run only the tasks whose id hashes to shard I of N (0 <= I < N); logs
                         and the lock carry the shard. Defaults to JOB_COMPLETION_INDEX of
                         JOB_COMPLETIONS (a Kubernetes Indexed Job; the index alone is refused)
          --resume       skip the tasks the job's history says are done: its latest run (every
                         shard's), and the resumes and replays since; or the LOGs given, and
                         the logs they resumed from. Works on the log of a killed run. With
                         no history in DIR/<job name> it refuses (exit 2), unless
                         --fresh-if-no-history says to run every task then
          --once-per KEY complete the job once per KEY: a run with a KEY the job's log
                         folder has no run of (of this shard) runs every task; one with a
                         KEY it has (a retried Kubernetes pod: KEY its Job's name) resumes
                         that run, as --resume does. Each night's Job is a new KEY
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
          --metrics-push URL|@FILE
                         push the same figures to a Prometheus Pushgateway at URL (grouped by
                         job and shard) at the start, every --metrics-interval seconds and at
                         the end; @FILE reads the URL from FILE. The URL is a secret, never
                         written; a failed push is a warning and never changes the exit code
          --trace        send W3C trace context on every request attempt (traceparent, a span
                         each; TRACESTATE's tracestate), as the job's "trace": true. With
                         TRACEPARENT set, the run is a child of that span; with
                         OTEL_EXPORTER_OTLP_ENDPOINT set, the run's trace is exported there
                         when it ends (docs/cli.md, "Trace context on every request")
          --base-url URL the job's baseURL, in place of the file's: the same job against
                         another server (a staging copy, a local recording), unedited
          --window START..END
                         a backfill: every task with a "window" walks this range instead
                         (2025-01-01..2025-02-01), every window in it fetched again
          --task GLOB    only the tasks whose id matches (repeatable; 'user-*'), and the tasks
                         they need (those that capture their inputs, unless an earlier run
                         kept what they captured); the run joins the job's history, as a
                         replay does, and never starts it afresh
          --record DIR   keep every answer the run gets in DIR (a new or empty folder): a
                         line each in DIR/recording.jsonl, the bodies in DIR/bodies, secrets
                         taken out; and the cursors, validators and records files it starts
                         from in DIR/state
          --offline DIR  rehearse the job against DIR's recording, without a network: every
                         request is answered as it was recorded (one it lacks fails, named);
                         outputs and logs go to DIR/rehearsals/<time>/, never to the job's
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
                         "ok", "failed", "notModified", "ignored", "alreadyDone",
                         "writesResent", "writesHeld", "notRun"}, "requests", "durationMs",
                         "exitCode", "interrupted", "stoppedBy" (null, "SIGINT", "SIGTERM",
                         "deadline"), "tasksUnlisted" (stopped before a fan-out listed all
                         its tasks: more not run than "notRun"), "log" (null with --log-dir
                         -), "logIncomplete" (null or why), "missing" (after --resume: tasks
                         the history lacks, else null),
                         "historyWhole" (with "missing": whether the history holds a whole
                         run; without one, tasks no run reached are not in "missing"),
                         "checksFailed" ([{"check", "message"}] of the job's data checks),
                         "recordsNotWritten" (records files the run could not write)};
                         a refusal (exit 2 or 3) prints {"jobFile", "exitCode", "refused"
                         ("usage" or "locked"), "errors" (the lines stderr has)} instead
        Exit codes: 0 ok, 1 some task failed, 2 bad usage or job file (nothing sent),
        3 another run of the job holds its lock, 4 every task ok but a data check failed,
        130/143 interrupted by SIGINT/SIGTERM (143 also at the deadline).
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
                "--log-dir", "--backend", "--concurrency", "--shard", "--ping-url",
                "--metrics-file", "--metrics-push", "--metrics-interval", "--deadline",
                "--grace", "--base-url", "--window", "--record", "--offline",
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

    /// `courier run` itself, phase by phase; ``run(_:)`` adds the JSON object of a refusal.
    private static func runCommand(_ arguments: [String]) async -> Int32 {
        // The ping and push URLs are secrets from the start: no message, a usage error's
        // included, may show them.
        let usageConsole = Console(redactor: Redactor(secrets: argumentSecrets(arguments)))
        let parsed: RunArguments
        do throws(UsageError) {
            guard let arguments = try parse(arguments) else {
                return CommandLineInterface.ExitCode.success
            }
            parsed = arguments
        } catch {
            usageConsole.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        guard var (job, total) = await loadJob(parsed, console: usageConsole) else {
            return CommandLineInterface.ExitCode.usage
        }
        let console = Console(redactor: Redactor(secrets: job.secrets))
        var options = parsed.options
        if !parsed.logDirectoryGiven { options.logDirectory = job.home.logs }
        if let code = await refusal(job, arguments: parsed, options: options, console: console) {
            return code
        }
        if let code = await history(
            of: job, arguments: parsed, options: &options, console: console)
        {
            return code
        }
        if let code = await resumedSettings(
            &job, total: &total, arguments: parsed, options: &options, console: console)
        {
            return code
        }
        if let code = prepareRehearsal(
            &job, arguments: parsed, options: &options, console: console)
        {
            return code
        }
        // A backfill with no window over yet (a range in the future: a wrong year) would run
        // nothing and say "0 tasks", exit 0 (trial NN).
        if let window = parsed.window, options.resume == nil, total == 0 {
            console.error(
                "courier: \(job.name): --window \(window.text) holds no window that has ended yet (a window is fetched once it is over, less the task's lag); nothing was sent"
            )
            return CommandLineInterface.ExitCode.usage
        }
        // A glob no task can match is refused before the plan or the run (exit 2): nothing
        // is sent or logged.
        let unmatchable = ReplaySelection.unmatchable(parsed.only, in: job)
        guard unmatchable.isEmpty else {
            for glob in unmatchable { noMatch(glob, job: job, console: console) }
            return CommandLineInterface.ExitCode.usage
        }
        // Before the lock and the log: a refusal sends nothing and writes nothing. The dry
        // run says it too, as the run would (trial L: it planned in silence, exit 0).
        let refusal = ConditionalState.refusal(for: job)
        if parsed.dryRun {
            if let refusal {
                console.error("courier: \(job.name): \(refusal)")
                return CommandLineInterface.ExitCode.usage
            }
            guard printDryRun(job, total: total, options: options, console: console) else {
                for glob in parsed.only { noMatch(glob, job: job, console: console) }
                return CommandLineInterface.ExitCode.usage
            }
            return CommandLineInterface.ExitCode.success
        }
        if let refusal {
            console.error("courier: \(job.name): \(refusal)")
            await pingRefusal(job, backend: options.backend, console: console, reason: refusal)
            return CommandLineInterface.ExitCode.usage
        }
        options.trace = traceSettings(
            asked: parsed.trace || job.trace, environment: ProcessInfo.processInfo.environment,
            console: console)
        return await execute(
            job, total: total, arguments: parsed, options: options, console: console)
    }
}
