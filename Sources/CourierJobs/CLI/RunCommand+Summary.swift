import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run`'s end: the run itself, and what it prints (the summary line cron mails, or
/// its JSON).
extension RunCommand {
    /// Runs the job (or its `--task` selection) and prints the summary; the exit code.
    static func execute(
        _ job: Job, total: Int, arguments: RunArguments, options: RunOptions, console: Console
    ) async -> Int32 {
        var options = options
        if job.notify != nil {
            let shard = options.shard
            options.summaryLine = { describe($0, job: job, shard: shard) }
        }
        do {
            let selection =
                arguments.only.isEmpty
                ? nil : ReplaySelection(job: job.name, globs: arguments.only)
            let runner =
                selection.map {
                    JobRunner(
                        job: job, options: options, total: 0,
                        source: .selection($0, replayOf: []))
                } ?? JobRunner(job: job, options: options, total: total)
            let summary = try await runner.run()
            if let unmatched = selection?.unmatched, !unmatched.isEmpty {
                for glob in unmatched { noMatch(glob, job: job, console: console) }
                if summary.nothingChosen { return CommandLineInterface.ExitCode.usage }
            }
            #if DEBUG
                // Tests of the built binary read which file work ran on a curl loop thread.
                if let path = ProcessInfo.processInfo.environment["COURIER_DEBUG_LOOP_FILE_WORK"] {
                    let seen = LoopThreadFileWork.seen.withLock { $0 }.sorted()
                    try? Data(seen.map { $0 + "\n" }.joined().utf8).write(
                        to: URL(fileURLWithPath: path))
                }
            #endif
            printSummary(
                summary, job: job, json: arguments.json, options: options, console: console)
            await exportTrace(summary, job: job, options: options, console: console)
            if let failure = options.recorder?.failure.withLock({ $0 }) {
                console.error("courier: \(job.name): the recording is incomplete: \(failure)")
                return max(summary.exitCode, CommandLineInterface.ExitCode.taskFailed)
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

    /// Says that `--task GLOB` matches no task of the job.
    /// A glob a fan-out's ids could match is told where those ids came from: the values its
    /// producer captured, in this run or kept from the run that last sent it (a trial looked
    /// for an item an earlier night had listed, and read that the job had no such task).
    static func noMatch(_ glob: String, job: Job, console: Console) {
        let file = ShellWord.quoted(job.file.relativePath)
        let fanOuts = job.tasks.filter {
            $0.captureSource != nil && ReplaySelection.mayChoose($0, globs: [glob])
        }
        let why =
            fanOuts.isEmpty
            ? "(`courier run \(file) --dry-run` lists them)"
            : "(the ids of \(fanOuts.map(\.id).joined(separator: ", ")) are the values captured by the last run that sent \(fanOuts.count == 1 ? "its producer" : "their producers"); `courier run \(file) --dry-run --task \(ShellWord.quoted(ReplaySelection.glob(fanOuts[0].id)))` lists them)"
        console.error(
            "courier: \(job.name): --task \(glob): no task of the job has a matching id \(why)"
                .showingControlCharacters)
    }

    /// The summary line (or `--json`'s object): on stdout, or on stderr when stdout has the
    /// log; with `--quiet`, only for a run that did not succeed.
    static func printSummary(
        _ summary: RunSummary, job: Job, json: Bool, options: RunOptions, console: Console
    ) {
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
            // One line, whatever its paths hold: a newline in a folder's name had continued
            // the summary on lines of its own (trial GG).
            let line = describe(summary, job: job, shard: options.shard).showingControlCharacters
            // With the log on stdout, stdout holds nothing but JSON lines.
            if options.logToStandardOutput {
                console.error(line)
            } else {
                console.output(line)
            }
        }
    }

    /// What the job's history still lacks after a repair, and what runs it: `--resume`, except
    /// for the writes it held, which only a name sends (``WriteRule``).
    ///
    /// `elsewhere`: of the tasks not done and not held, those other shards own, which this
    /// shard's repair never runs (a trial's shard resume named itself as the repair, again
    /// and again).
    static func historyNote(
        missing: Int, held: Int, partial: Bool = false, unlisted: Bool = false, job: Job,
        log: URL, shard: Shard? = nil, elsewhere: Int = 0
    ) -> String {
        if shard != nil, elsewhere > 0, !partial {
            let own = max(0, missing - held - elsewhere)
            let parts = [
                held > 0
                    ? "\(min(held, missing)) held writes: stderr says why; check the server, then name each with --task ID to send it"
                    : nil,
                own > 0
                    ? "`\(repairCommand(job, log: log, shard: shard))` runs this shard's \(own)"
                    : nil,
                "`\(repairCommand(job, log: log))` runs every shard's, or each shard's own --resume",
            ].compactMap { $0 }
            return
                "; the job's history: \(missing) task\(missing == 1 ? "" : "s") not done, \(elsewhere) of them other shards' (\(parts.joined(separator: "; ")))"
        }
        let repair = "`\(repairCommand(job, log: log, shard: shard))`"
        if partial {
            // No whole run: a task no run reached has no line, and no count can include it.
            // Only a resume of the whole job runs every task not done (a shard's runs its
            // own: a trial's shard named itself here).
            let repair = "`\(repairCommand(job, log: log))`"
            let named =
                missing > 0 ? "\(missing) task\(missing == 1 ? "" : "s") not done, and " : ""
            let unknown =
                unlisted
                ? "more that no run has listed yet (those fed by captures)"
                : "no whole run of the job yet, so the tasks no run reached are not known"
            return "; the job's history: \(named)\(unknown) (\(repair) runs every task not done)"
        }
        guard missing > 0 else { return "; the job's history: every task done" }
        let plural = missing == 1 ? "" : "s"
        guard held > 0 else {
            return
                "; the job's history: \(missing) task\(plural) not done (\(repair) runs \(missing == 1 ? "it" : "them"))"
        }
        let rest = max(0, missing - held)
        let heldText =
            "\(min(held, missing)) of them held writes: stderr says why; check the server, then name each with --task ID to send it"
        return
            "; the job's history: \(missing) task\(plural) not done (\(heldText)\(rest > 0 ? "; \(repair) runs the other \(rest)" : ""))"
    }

    /// The summary line cron mails: tasks, ok (not modified), failed, requests and time;
    /// after a resume or a replay, how many of the job's tasks its history still misses, and
    /// the command that repairs them.
    /// `repair`: the command that repairs the run, when it is not a resume of the job (a
    /// replay of logs alone).
    /// `note`: said before the log's path (a replay of logs alone: what it does not do).
    static func describe(
        _ summary: RunSummary, job: Job, shard: Shard? = nil, repair: String? = nil,
        note: String? = nil
    ) -> String {
        let name = shard.map { "\(job.name) (shard \($0))" } ?? job.name
        var text =
            "courier: \(name): \(summary.total) task\(summary.total == 1 ? "" : "s"), \(summary.ok) ok"
        let notes = [
            summary.notModified > 0 ? "\(summary.notModified) not modified" : nil,
            summary.ignored > 0 ? "\(summary.ignored) ignored by onResponse" : nil,
        ].compactMap { $0 }
        if !notes.isEmpty { text += " (\(notes.joined(separator: ", ")))" }
        text +=
            ", \(summary.failed) failed, \(summary.requests) request\(summary.requests == 1 ? "" : "s") in \(String(format: "%.1f", summary.duration)) s"
        if summary.alreadyDone > 0 { text += " (\(summary.alreadyDone) done by earlier runs)" }
        if summary.writesResent > 0 {
            text +=
                "; \(summary.writesResent) write\(summary.writesResent == 1 ? "" : "s") of unknown outcome sent again with \(summary.writesResent == 1 ? "its" : "their") idempotency key (made once only if the server honours it)"
        }
        if summary.writesHeld > 0 {
            text +=
                "; \(summary.writesHeld) write\(summary.writesHeld == 1 ? "" : "s") not sent again (why: on stderr, and in the log)"
        }
        // An interrupted run's tasks that never started are neither ok nor failed.
        let notRun = summary.total - summary.ok - summary.failed
        if summary.interruptedBy != nil, notRun > 0 {
            text += ", \(notRun) not run"
            if summary.unlisted { text += ", and more not started (those fed by captures)" }
        } else if summary.unlisted {
            text += ", more tasks not started (those fed by captures)"
        }
        if let seconds = summary.deadlineReached {
            text += ", stopped at its deadline (\(DurationText.short(seconds)))"
        } else if let reason = summary.stopReason {
            text += ", interrupted by \(reason)"
        }
        if let missing = summary.missing {
            text += historyNote(
                missing: missing, held: summary.missingHeld, partial: summary.historyPartial,
                unlisted: summary.unlisted, job: job, log: summary.logURL, shard: shard,
                elsewhere: summary.missingElsewhere)
        }
        text += otherLineNote(summary, job: job)
        if summary.recordsFailed > 0 {
            // The tasks were ok, and the run exits 1: say why where the counts are (trial V).
            let files =
                summary.recordsFailed == 1
                ? "1 records file" : "\(summary.recordsFailed) records files"
            text += "; \(files) not written (why: on stderr)"
        }
        if !summary.checkFailures.isEmpty {
            let names = summary.checkFailures.map(\.check).joined(separator: ", ")
            text += "; data checks failed: \(names)"
        }
        if summary.logVanished { return text + "; the log was deleted during the run" }
        // Where the run's files went, when it saves any.
        if job.tasks.contains(where: { $0.save != nil || $0.records != nil }) {
            text += "; outputs: \(job.outputDir)"
        }
        if let note { text += "; " + note }
        text += "; log: \(summary.logURL.relativePath)"
        // A rehearsal is not repaired: a request its recording lacks is recorded again.
        if summary.rehearsal { return text + "; rehearsed offline: nothing was sent" }
        // The next step, last, where cron's mail ends: a failed or cut night is repaired by
        // running what its history lacks (a resume says it in its own words, above).
        // A records file not written is a repair too: a resume writes it from the parts kept
        // (trial SSS: no repair line, and the user had to guess).
        if summary.missing == nil,
            summary.failed > 0 || notRun > 0 || summary.unlisted || summary.recordsFailed > 0
        {
            text +=
                "; to repair: \(repair ?? repairCommand(job, log: summary.logURL, shard: shard, resuming: summary.repairLog))"
            if summary.repairHolds > 0 {
                let count = summary.repairHolds
                text +=
                    " (it will not send again \(count) failed write\(count == 1 ? "" : "s") the server took or may have taken (answered 2xx, or no answer came): check the server, then name \(count == 1 ? "it" : "each") with --task ID)"
            }
        }
        return text
    }

    /// The log a repair of a backfill's run names: its own, or for a replay or a resume of
    /// the backfill the backfill's (a replay's log holds no chain: resumed from it, the repair
    /// fetched every window of the range again, trial RR).
    static func backfillRoot(of log: URL, first: LogLine) -> String {
        let folder = log.deletingLastPathComponent()
        if let run = first.replayOf.first,
            let name = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .first(where: { $0.hasSuffix("-\(run).jsonl") })
        {
            return folder.appendingPathComponent(name).standardizedFileURL.path
        }
        // A resume's, the backfill's log it went on from, as `report` names it (trial XX: the
        // two named different logs for one repair).
        if let root = first.resumedFrom.first, FileManager.default.fileExists(atPath: root) {
            return URL(fileURLWithPath: root).standardizedFileURL.path
        }
        return log.standardizedFileURL.path
    }

    /// What the job's other lines of runs left not done, and their repairs
    /// (``RunSummary/otherLines``): three at most, the rest counted.
    static func otherLineNote(_ summary: RunSummary, job: Job) -> String {
        let shown = summary.otherLines.prefix(3).map {
            "; " + $0.note(resume: repairCommand(job, log: summary.logURL, resuming: $0.log))
        }
        let more = summary.otherLines.count - shown.count
        return shown.joined()
            + (more > 0
                ? "; \(more) more backfills left tasks not done (courier report lists them)" : "")
    }

    /// The command that runs what the job's history lacks, as it can be pasted in any
    /// working folder (cron mails it): the job file's absolute path, and `--log-dir` (absolute
    /// too) when the run's log is not in the job's home (`log` is the run's log file).
    /// A shard's repair names its shard (a pod that ran the whole job's would wait for the
    /// other shards' locks, or repair what they are doing), a backfill's its log (the logs
    /// follow `--resume` at once, which takes them).
    /// - Parameter resuming: the log to name instead (another run's).
    static func repairCommand(
        _ job: Job, log: URL, shard: Shard? = nil, resuming: String? = nil
    ) -> String {
        // A backfill's, by its log: the job's history starts afresh at the next night, and
        // `--resume` alone would then complete the night instead (trial NN).
        var logs: [String] = []
        if let resuming {
            logs = [resuming]
        } else if let first = LogFiles.firstLine(of: log.path), first.runFields?.window != nil {
            logs = [backfillRoot(of: log, first: first)]
        }
        var command = JobRunner.resumeCommand(job, logs: logs)
        let folder = log.deletingLastPathComponent().deletingLastPathComponent()
        if folder.standardizedFileURL.path != job.home.logs.standardizedFileURL.path {
            command += " --log-dir \(ShellWord.quoted(folder.standardizedFileURL.path))"
        }
        if let shard { command += " --shard \(shard)" }
        return command
    }
}
