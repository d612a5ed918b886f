import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run`'s start, after the arguments: the job read and checked, the refusals that
/// send nothing (each pings the job's check), and the history a resume or `--task` run
/// completes.
extension RunCommand {
    /// The job and its validated task count; `nil` (the errors printed and pinged) when the
    /// file is not a valid job.
    static func loadJob(_ arguments: RunArguments, console: Console) async -> (Job, Int)? {
        do {
            var job = try JobDecoder.load(
                argument: arguments.jobPath, baseURL: arguments.baseURL, window: arguments.window)
            let total = try JobValidator.validate(job)
            // The ping and push URLs, secrets like every ping URL, and the OTLP exporter's
            // header values (an API key): no message shows them.
            job.secrets.formUnion(arguments.argumentSecrets)
            job.secrets.formUnion(
                OTLPEnvironment(ProcessInfo.processInfo.environment).headers.map(\.value))
            if let pingURL = arguments.pingURL {
                // Replaces the job's own notify.
                job.notify = NotifySettings(ping: pingURL)
            }
            if arguments.options.http2 { job.http2 = true }
            return (job, total)
        } catch {
            for line in error.errors { console.error("courier: \(line)") }
            if let pingURL = arguments.pingURL {
                // Nothing ran: the check hears of it now rather than when the pings stop.
                let count = error.errors.count
                await pingRefusal(
                    NotifySettings(ping: pingURL), job: arguments.jobPath,
                    backend: arguments.options.backend ?? .curl, console: console,
                    reason:
                        "not a valid job (\(count) problem\(count == 1 ? "" : "s"), the first: \(error.errors.first.map { "\($0)" } ?? "?"))"
                )
            }
            return nil
        }
    }

    /// What stops the run before anything is sent, printed and pinged: its exit code, or
    /// `nil` to go on. Notes that do not stop it (short secrets, urlsession on a terminal, an
    /// old home in a dry run) are printed here too.
    static func refusal(
        _ job: Job, arguments: RunArguments, options: RunOptions, console: Console
    ) async -> Int32? {
        if let shard = options.shard, let spec = job.tasks.first(where: { $0.records != nil }) {
            Console.error(
                "courier: \(job.file.relativePath): \(spec.path).records: a sharded run (shard \(shard)) cannot write records: a records file changes only once every task that writes it is done, and one shard cannot know that of the others; run the job without --shard (or JOB_COMPLETION_INDEX); nothing was sent"
            )
            return CommandLineInterface.ExitCode.usage
        }
        if let shard = options.shard,
            let spec = job.tasks.first(where: { $0.hasCaptures && $0.isWrite })
        {
            // A task that captures runs on every shard, so that each shard's children have
            // its values: a write would be made once per shard (trial GGG: two charges).
            Console.error(
                "courier: \(job.file.relativePath): \(spec.path) (\(spec.id)) is a write (\(spec.method.rawValue)) that captures values, and a task that captures runs on every shard of a split: a sharded run (shard \(shard)) would make it once per shard; run the job without --shard (or JOB_COMPLETION_INDEX), or make the write a job of its own (a POST that only reads says \"safe\": true); nothing was sent"
            )
            return CommandLineInterface.ExitCode.usage
        }
        if let reason = job.backendRefusal(options.backend) {
            console.error("courier: \(reason); nothing was sent")
            await pingRefusal(job, backend: .curl, console: console, reason: reason)
            return CommandLineInterface.ExitCode.usage
        }
        warnAboutShortSecrets(job, console: console)
        // On a terminal only, as the note below: cron would mail a text a job means, nightly.
        if isatty(STDERR_FILENO) == 1 || arguments.dryRun {
            for note in job.notes { console.error("courier: warning: \(note)") }
        }
        if (options.backend ?? job.backend) == .urlsession, isatty(STDERR_FILENO) == 1 {
            // On a terminal only: cron mails whatever a job prints on stderr, every night.
            console.error(
                "courier: note: on the urlsession backend a hostile or broken server can end the process (FoundationNetworking traps on a chunked body with trailers and on a connection closed inside the header block); use the curl backend against servers you do not trust (docs/transports.md)"
            )
        }
        let otherFile =
            options.logToStandardOutput
            ? nil
            : OtherJobFile.refusal(
                for: job, logFolder: options.logDirectory.appendingPathComponent(job.name))
        if let refusal = otherFile
            ?? OldHome.refusal(for: job, logDirectoryGiven: arguments.logDirectoryGiven)
        {
            if arguments.dryRun {
                console.error("courier: \(job.name): warning: \(refusal)")
            } else {
                console.error("courier: \(job.name): \(refusal)")
                await pingRefusal(job, backend: options.backend, console: console, reason: refusal)
                return CommandLineInterface.ExitCode.usage
            }
        }
        return nil
    }

    /// The earlier runs this one completes: `--resume`'s (the job's history, or the logs it
    /// names) and, for `--task`, the history's kept captures. An exit code when the resume
    /// is refused (a named log missing, no history without `--fresh-if-no-history`).
    static func history(
        of job: Job, arguments: RunArguments, options: inout RunOptions, console: Console
    ) async -> Int32? {
        let folder = options.logDirectory.appendingPathComponent(job.name)
        var resume = arguments.resume
        if let key = arguments.oncePer {
            // A pod Kubernetes retries finds its Job's run and completes it; the next night's
            // Job (another key) starts afresh. Trial BB: `--resume --fresh-if-no-history`
            // resumed the first night's history every night after, and fetched nothing.
            options.oncePer = key
            resume = JobHistory.hasRun(oncePer: key, shard: options.shard, folder: folder)
            if resume {
                console.error(
                    "courier: \(job.name): --once-per \(key): a run with this key is in the job's history; completing it (--resume)"
                )
            }
        }
        if resume {
            let named =
                arguments.oncePer.map { JobHistory.logs(oncePer: $0, folder: folder) }
                ?? arguments.resumeLogs.map { URL(fileURLWithPath: $0) }
            switch RunHistory.resuming(
                job, folder: folder, named: named,
                fresh: arguments.freshIfNoHistory, warn: { console.error("courier: \($0)") })
            {
            case .failure(let refusal):
                console.error("courier: \(refusal.ofJob ? "\(job.name): " : "")\(refusal.message)")
                await pingRefusal(
                    job, backend: options.backend, console: console, reason: refusal.message)
                return CommandLineInterface.ExitCode.usage
            case .success(nil):
                console.error(
                    "courier: \(job.name): no earlier run in \(folder.path); running every task (--fresh-if-no-history)"
                )
            case .success(let found):
                options.resume = found.map { freshened($0, of: job, console: console) }
            }
        }
        options.history = options.resume
        if !arguments.only.isEmpty {
            options.only = arguments.only
            options.named = Set(arguments.only.filter(WriteRule.names))
            // What the history kept of the tasks that capture saves sending them again.
            if options.history == nil, !options.logToStandardOutput {
                options.history = RunHistory.kept(by: job, folder: folder)
            }
        }
        options.writes = options.history?.writes
        return nil
    }

    /// `history` less the done tasks whose records wait in parts older than their file
    /// (``RecordsStore/staleParts(of:runs:done:)``): a resume fetches them again; a replay,
    /// which sends only the failed, holds their file.
    static func freshened(
        _ history: RunHistory, of job: Job, console: Console, replaying logs: [String]? = nil
    ) -> RunHistory {
        let store = RecordsStore(outputDir: URL(fileURLWithPath: job.outputDir), job: job.name)
        let stale = store.staleParts(of: job, runs: history.runs, done: history.done)
        guard !stale.isEmpty else { return history }
        var history = history
        history.done.subtract(stale)
        history.stale = stale
        let tasks = "\(stale.count) task\(stale.count == 1 ? "" : "s") done by earlier runs"
        let why =
            "the records kept for \(stale.count == 1 ? "it" : "them") are older than their file, which a later run wrote"
        if let logs {
            let resume = JobRunner.resumeCommand(job, logs: logs)
            console.error(
                "courier: \(job.name): \(tasks) not taken: \(why) (`\(resume)` fetches them again)"
            )
        } else {
            console.error("courier: \(job.name): \(tasks) fetched again: \(why)")
        }
        return history
    }

    /// A `--resume` of a backfill (`--window`) completes the same backfill. The run it
    /// completes logged its window; without it the job's windows are those its cursor file
    /// leaves, and the backfill's own are not among them (trials HH and HH2: the resume sent
    /// nothing, said every task was done and exited 0). The job is read again with that
    /// window; an exit code when the command line names another.
    static func resumedWindow(
        _ job: inout Job, total: inout Int, arguments: RunArguments, options: inout RunOptions,
        console: Console
    ) async -> Int32? {
        guard let first = options.resume?.logs.first, let start = LogFiles.firstLine(of: first)
        else { return nil }
        guard let logged = start.runFields?.window, let window = WindowOverride(logged) else {
            guard let given = arguments.window else { return nil }
            // The run it completes walked the job's own windows: a range of its own would mix
            // two sets of tasks, and write records while the other's failed window is missing
            // (trial JJ: "every task done", exit 0).
            let reason =
                "--resume completes run \(start.run), which walked the job's own windows, not --window \(given.text): a backfill is a run of its own (run it without --resume, or complete one cut short with --resume ITS-LOG), and this resume takes no --window"
            console.error("courier: \(job.name): \(reason); nothing was sent")
            await pingRefusal(job, backend: options.backend, console: console, reason: reason)
            return CommandLineInterface.ExitCode.usage
        }
        if let given = arguments.window {
            guard given.covers(theSameRangeAs: window) else {
                let reason =
                    "--resume completes run \(start.run), a backfill of --window \(logged): give that window or none (a backfill of another range is a run of its own, without --resume)"
                console.error("courier: \(job.name): \(reason); nothing was sent")
                await pingRefusal(job, backend: options.backend, console: console, reason: reason)
                return CommandLineInterface.ExitCode.usage
            }
            return nil
        }
        var again = arguments
        again.window = window
        guard let (reloaded, count) = await loadJob(again, console: console) else {
            return CommandLineInterface.ExitCode.usage
        }
        (job, total, options.window) = (reloaded, count, logged)
        console.error(
            "courier: \(job.name): --resume completes run \(start.run), the backfill --window \(logged)"
        )
        return nil
    }

    /// A resume completes the run it resumes as it ran: over its backfill's window, against
    /// its `--base-url` (``resumedWindow``, ``resumedBaseURL``).
    static func resumedSettings(
        _ job: inout Job, total: inout Int, arguments: RunArguments, options: inout RunOptions,
        console: Console
    ) async -> Int32? {
        if let code = await resumedWindow(
            &job, total: &total, arguments: arguments, options: &options, console: console)
        {
            return code
        }
        return await resumedBaseURL(
            &job, total: &total, arguments: arguments, options: options, console: console)
    }

    /// A `--resume` of a run sent with `--base-url` goes to the same server when the command
    /// line names none (trial QQ: a repair without it went to the file's `baseURL`). The job
    /// is read again with it; an exit code when it no longer reads.
    static func resumedBaseURL(
        _ job: inout Job, total: inout Int, arguments: RunArguments, options: RunOptions,
        console: Console
    ) async -> Int32? {
        guard arguments.baseURL == nil, let first = options.resume?.logs.first,
            let start = LogFiles.firstLine(of: first), let base = start.runFields?.baseURL
        else { return nil }
        var again = arguments
        again.baseURL = base
        again.window = options.window.flatMap(WindowOverride.init) ?? arguments.window
        guard let (reloaded, count) = await loadJob(again, console: console) else {
            return CommandLineInterface.ExitCode.usage
        }
        (job, total) = (reloaded, count)
        console.error(
            "courier: \(job.name): --resume completes run \(start.run), sent to --base-url \(base)"
        )
        return nil
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

    /// Says so when a secret is too short to be searched for in free text (``Redactor``):
    /// it is then redacted only where it is a secret header's whole value.
    static func warnAboutShortSecrets(_ job: Job, console: Console) {
        if !job.emptySecrets.isEmpty {
            let names = job.emptySecrets.joined(separator: ", ")
            console.error(
                "courier: \(job.name): warning: \(names) \(job.emptySecrets.count == 1 ? "is" : "are") empty: the requests that use \(job.emptySecrets.count == 1 ? "it" : "them") send nothing in its place (an unset variable is refused; an empty one is sent as it is)"
            )
        }
        let short = job.secrets.filter { !$0.isEmpty && $0.utf8.count < Redactor.minimumLength }
        guard !short.isEmpty else { return }
        console.error(
            "courier: \(job.name): warning: \(short.count) secret value\(short.count == 1 ? " is" : "s are") shorter than \(Redactor.minimumLength) characters: redacted where a secret header holds it whole, but not searched for in URLs, bodies or messages (a short value would erase every such number); use a longer secret"
        )
    }
}
