import Foundation

/// What `replay --job` reads: the job's history when no log is named, the repairs made since of
/// the logs named, and the job with the range of a backfill it replays.
extension ReplayCommand {
    /// The logs a replay with `--job` reads: with none named, the logs of the job's own
    /// history, as `run --resume` reads it; `false` (said) when there are none. With log files
    /// named, those and the repairs made of them since in the job's log folder (replays with
    /// `--job`, resumes that read them), as `run --resume LOG` reads them: a second replay of
    /// the same logs sends nothing the first repaired (trial LL: it sent a window the first
    /// had repaired, which the job no longer builds, and exited 1).
    static func historyLogs(of job: Job, options: inout Options, console: Console) -> Bool {
        let folder =
            (options.logDirectoryGiven ? options.run.logDirectory : job.home.logs)
            .appendingPathComponent(job.name)
        if !options.logs.isEmpty {
            var isFolder: ObjCBool = false
            guard
                !options.logs.contains(where: {
                    $0 == "-" || !FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder)
                        || isFolder.boolValue
                })
            else { return true }
            let since = LogFiles.continuations(
                of: LogFiles.chain(of: options.logs.map { URL(fileURLWithPath: $0) }), in: folder)
            if !since.isEmpty, !options.run.quiet {
                console.error(
                    "courier: \(job.name): also read: \(since.count) later repair\(since.count == 1 ? "" : "s") of these logs (\(since.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")))"
                )
            }
            options.logs += since
            return true
        }
        options.logs = JobHistory.read(folder: folder).logs
        guard options.logs.isEmpty else { return true }
        console.error(
            "courier: \(job.name): no earlier run of this job in \(folder.path); nothing to replay")
        return false
    }

    /// A backfill (`run --window`) is replayed with the job read with its range, and a run
    /// sent with `run --base-url` against that server, as the replayed run logged them, as
    /// `run --resume` reads them (``RunCommand/resumedWindow``). Read with its own windows,
    /// the job's tasks were not the backfill's: the records file was held for a window outside
    /// the range, and the replay said every task was done (trial JJ); read with its file's
    /// `baseURL`, the replay went to another server (trial QQ). Reads `job` again when the
    /// first replayed log's run logged either; an exit code when the job no longer reads.
    static func loggedSettings(
        _ job: inout Job?, path: String, options: inout Options, console: Console
    ) -> Int32? {
        guard job != nil, let first = options.logs.first,
            let start = LogFiles.firstLine(of: first), let fields = start.runFields
        else { return nil }
        let window = fields.window.flatMap(WindowOverride.init)
        let base = options.baseURL == nil ? fields.baseURL : nil
        guard window != nil || base != nil else { return nil }
        if let base { options.baseURL = base }
        guard let reloaded = loadJob(path, options: options, window: window) else {
            return CommandLineInterface.ExitCode.usage
        }
        job = reloaded
        if let logged = fields.window {
            options.run.window = logged
            console.error(
                "courier: \(reloaded.name): replaying run \(start.run), the backfill --window \(logged)"
            )
        }
        if let base {
            console.error(
                "courier: \(reloaded.name): replaying run \(start.run) against --base-url \(base), as it was sent"
            )
        }
        return nil
    }

    /// Whether `id` is a window the job's cursor file holds as done: a later run fetched it
    /// (the next night, or its resume), so the job no longer builds it and a replay has nothing
    /// to send (trial NN: refused as "no longer built", exit 1).
    static func isDoneWindow(_ id: String, of job: Job) -> Bool {
        guard job.tasks.contains(where: { $0.window != nil }) else { return false }
        let kept =
            (try? CursorFile.load(CursorFile.location(outputDir: job.outputDir)).get()) ?? [:]
        return kept[id] != nil
    }

    /// What a replay says of a selected window that a later run fetched.
    static func doneWindowNote(_ id: String) -> String {
        "task \(id): its window was fetched since (the cursor file holds it as done); not replayed"
    }

    /// What the logs say of the job's writes, with the job's history beside them when logs
    /// were named (they may leave out what it did since).
    static func writes(
        of history: TaskHistory, job: Job?, jobNames: Set<String>, logsNamed: Bool,
        options: Options
    ) -> WriteHistory {
        guard logsNamed, let name = job?.name ?? (jobNames.count == 1 ? jobNames.first : nil)
        else { return history.writes }
        // Every history the write may have been made in: the folder the replay logs in, the
        // one the logs named are in (`--log-dir` may name another), and the job file's (logs
        // from a pipe or a copy, read elsewhere; trials GGG, HHH: each made again a write a
        // resume had made).
        var folders: [URL] = []
        if let job {
            let logs = options.logDirectoryGiven ? options.run.logDirectory : job.home.logs
            folders.append(logs.appendingPathComponent(name))
        } else {
            folders.append(options.run.logDirectory.appendingPathComponent(name))
        }
        for root in [
            nightRoot(history, logs: options.logs, job: name),
            historyFolder(ofJobFile: history.jobPath, job: name),
        ] {
            if let folder = root?.appendingPathComponent(name) { folders.append(folder) }
        }
        // The logs named too: standard input is not read again with the job's history. The
        // keys the night's own writes went out with are theirs.
        var merged = history.writes
        if let writes = JobHistory.writes(folders: folders, with: options.logs) {
            merged = writes.merging(history.writes)
            merged.nightKeys = history.writes.nightKeys
        }
        // A replay of the log alone where no history holds the night's run (a pipe without
        // `run.start`, a history moved away, a folder holding only such replays' own logs)
        // cannot know whether a later run made a write (trials OOO, QQQ: made again).
        if job == nil, !holdsNight(folders, logs: options.logs, writtenIn: history.logDir) {
            merged.unknownHistory =
                "no history of its night is here (the folder its log was written in is gone, or its run.start was left out), so whether a later run made this write cannot be known: replay the log where the job's history is now, beside the runs since, or name it (--task ID) to send it"
        }
        return merged
    }

    /// Whether one of `folders` holds a log of a run the replayed `logs` are of
    /// (`TIME-RUN.jsonl`): the night's own history. When their `run.start` says the folder
    /// the night was written in (`logDir`), only that folder is: a night's log restored alone
    /// under its name elsewhere holds the night but not the runs since (trial RRR: made
    /// again).
    static func holdsNight(_ folders: [URL], logs: [String], writtenIn: String?) -> Bool {
        let runs = Set(
            LogFiles.expandingFolders(logs).compactMap { LogFiles.firstLine(of: $0)?.run })
        let real = { (url: URL) in url.standardizedFileURL.resolvingSymlinksInPath().path }
        let candidates =
            writtenIn.map { written in
                folders.filter { real($0) == real(URL(fileURLWithPath: written)) }
            } ?? folders
        return candidates.contains { folder in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.contains { name in runs.contains { name.hasSuffix("-\($0).jsonl") } }
        }
    }

    /// Sets where the replay logs: the job's history, or the one the logs replayed belong to
    /// (docs/log-format.md, "One history per job"), wherever the command runs from, unless
    /// `--log-dir` says; `false` (said why) when `--log-dir` names another history than
    /// theirs (a dry run warns).
    static func logIn(
        _ history: TaskHistory, job: Job?, jobNames: Set<String>, options: inout Options,
        console: Console
    ) -> Bool {
        if !options.logDirectoryGiven, let name = job?.name ?? jobNames.first {
            options.run.logDirectory =
                nightRoot(history, logs: options.logs, job: name)
                ?? job?.home.logs ?? historyFolder(ofJobFile: history.jobPath, job: name)
                ?? options.run.logDirectory
        }
        guard let refusal = elsewhere(history, job: job, jobNames: jobNames, options: options)
        else { return true }
        console.error("courier: \(options.dryRun ? "warning: " : "")\(refusal)")
        return options.dryRun
    }

    /// Why the replay may not log where `--log-dir` says: the logs replayed belong to the
    /// job's history in another folder (theirs, or their job file's), where a later repair of
    /// that night would not see what this one sent (trial JJJ: a replay made again the write
    /// a repair logged elsewhere had made). `nil` when it logs in that history.
    static func elsewhere(
        _ history: TaskHistory, job: Job?, jobNames: Set<String>, options: Options
    ) -> String? {
        guard options.logDirectoryGiven, let name = job?.name ?? jobNames.first,
            let theirs = nightRoot(history, logs: options.logs, job: name)
                ?? historyFolder(ofJobFile: history.jobPath, job: name),
            theirs.standardizedFileURL.path != options.run.logDirectory.standardizedFileURL.path
        else { return nil }
        return
            "the logs replayed are of the job's history in \(theirs.appendingPathComponent(name).path), and --log-dir would put this replay's log in \(options.run.logDirectory.appendingPathComponent(name).path): a later repair of that night would not see what it sent; leave out --log-dir; nothing was sent"
    }

    /// Whether `--job`'s history is another job file's (``OtherJobFile``): said before
    /// anything is read, whatever the logs hold (trial III: its dry run planned, and "nothing
    /// to replay" exited 0); a dry run warns and goes on.
    static func refusesOtherJobFile(_ job: Job, options: Options) -> Bool {
        let logs = options.logDirectoryGiven ? options.run.logDirectory : job.home.logs
        guard
            let refusal = OtherJobFile.refusal(
                for: job, logFolder: logs.appendingPathComponent(job.name))
        else { return false }
        Console.error("courier: \(job.name): \(options.dryRun ? "warning: " : "")\(refusal)")
        return !options.dryRun
    }

    /// The log root of the history the logs replayed belong to: the folder they are in
    /// (`ROOT/JOB/`), or, for a log piped in or copied elsewhere, the one its `run.start` says
    /// it was written in (`logDir`, wherever `--log-dir` put it; trial LLL), when that is
    /// there. `nil` when neither says.
    static func nightRoot(_ history: TaskHistory, logs: [String], job: String) -> URL? {
        if let root = historyFolder(of: logs, job: job) { return root }
        guard let path = history.logDir else { return nil }
        let folder = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        guard folder.lastPathComponent == job,
            FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue
        else { return nil }
        return folder.deletingLastPathComponent()
    }

    /// The log folder of the job file a log's `run.start` names (`jobPath`), when that file
    /// is there and still names the job `job`: where a log read from a pipe or copied out of
    /// its folder has its history.
    static func historyFolder(ofJobFile path: String?, job: String) -> URL? {
        guard let path, let folder = JobHome.logFolder(ofJobFile: URL(fileURLWithPath: path)),
            folder.lastPathComponent == job
        else { return nil }
        return folder.deletingLastPathComponent()
    }
}
