import Courier
import Foundation

/// Which logged tasks a replay takes: the logs read (refused when one cannot be), and the
/// filters applied to their final lines.
extension ReplayCommand {
    /// The history of the logs named; `nil` (said on stderr) when one cannot be read or no
    /// file holds a log line: a wrong path must not read as "nothing left to replay" (exit 0)
    /// to cron.
    static func readHistory(
        _ logs: [String], job: Job?, options: Options, console: Console
    ) -> TaskHistory? {
        // Messages name standard input's copy `-`, as the command line did (trial OOO).
        let named = { (text: String) in options.standardInput?.named(text) ?? text }
        let unreadable = LogReader.problems(LogFiles.expandingFolders(logs))
        guard unreadable.isEmpty else {
            for problem in unreadable {
                console.error("courier: \(named(problem)); nothing was sent")
            }
            return nil
        }
        let skipped = Locked(0)
        let history = TaskHistory.read(
            logs, keepAllFinals: options.filter.all,
            keepRunsOf: job.map(TaskHistory.capturingTasks(of:)) ?? [], keepSaves: true
        ) {
            skipped.withLock { $0 += 1 }
            console.error("courier: \(named($0))")
        }
        // Standard input alone, empty, is a pipe's filter that rightly left nothing; lines
        // that are none of them log lines are a mistake wherever they come from.
        let piped = logs.map { options.standardInput?.named($0) ?? $0 } == ["-"]
        guard history.lineCount > 0 || (piped && skipped.withLock({ $0 }) == 0) else {
            console.error(
                "courier: no log lines could be read from \(logs.map(named).joined(separator: ", ")); nothing was sent"
            )
            return nil
        }
        return history
    }

    /// The final lines the filters select, oldest first, and the jobs they are of; `nil`
    /// (said why) when they are of several jobs and no `--job` says which.
    /// With `--job`, notes in `options` what runs the logs do not hold did (``RunOptions/doneElsewhere``).
    static func select(
        _ history: TaskHistory, job: Job?, options: inout Options, console: Console
    ) -> ([LogLine], Set<String>)? {
        var selected = history.finals.values.filter { options.filter.matches($0) }
        // A write a killed run left under way has only its `request.start`: not done, and
        // sent again as the rule on writes allows, with its key (trial FF: "nothing to
        // replay", `--all` too).
        selected +=
            history.underWay.filter { key, line in
                !history.done.contains(key) && history.finals[key] == nil
                    && options.filter.matches(line)
            }.values
        selected.sort { ($0.time, $0.task ?? "") < ($1.time, $1.task ?? "") }
        if let job {
            leaveOutDoneElsewhere(
                &selected, of: history, job: job, options: &options, console: console)
        }
        let jobNames = Set(selected.map(\.job))
        if let job {
            let others = selected.filter { $0.job != job.name }
            // Only another job's: a repair of nothing must not exit 0 to cron (trial QQQ), as
            // `--resume` refuses another job's log.
            if !others.isEmpty, others.count == selected.count {
                console.error(
                    "courier replay: the logs are of another job (\(Set(others.map(\.job)).sorted().joined(separator: ", "))), not of --job's \(job.name); nothing was sent"
                )
                return nil
            }
            if !others.isEmpty {
                console.error(
                    "courier: \(others.count) logged task\(others.count == 1 ? "" : "s") of other jobs (\(Set(others.map(\.job)).sorted().joined(separator: ", "))) left out: --job is \(job.name)"
                )
                selected.removeAll { $0.job != job.name }
            }
        } else if jobNames.count > 1 {
            console.error(
                "courier replay: the logs hold several jobs (\(jobNames.sorted().joined(separator: ", "))); replay one at a time, or give --job"
            )
            return nil
        }
        if selected.isEmpty, let glob = options.filter.taskGlob,
            !logsHoldTask(matching: glob, logs: options.logs)
        {
            // A mistyped id must not read as "nothing left to replay" (exit 0) to cron, as
            // `run --task` refuses one (trial CCC: `--task 'nope*'` exited 0).
            console.error(
                "courier replay: --task \(glob): no task in the logs has a matching id; nothing was sent"
                    .showingControlCharacters)
            return nil
        }
        return (selected, jobNames)
    }

    /// Whether a line of the logs names a task whose id `glob` matches, whatever its outcome
    /// (the history keeps only what is not done). Standard input cannot be read again: it is
    /// taken to hold one.
    private static func logsHoldTask(matching glob: String, logs: [String]) -> Bool {
        guard !logs.contains("-") else { return true }
        let lines = LogReader(paths: LogFiles.ordered(logs)) { _ in }
        return lines.contains { entry in entry.line.task.map { fnmatch(glob, $0, 0) == 0 } == true }
    }

    /// Leaves out of `selected` the tasks that runs the logs do not hold did with the same
    /// request, since or as other shards of their split
    /// (``JobHistory/doneLater(than:own:folder:siblings:)``), and notes them in `options`, so
    /// that the replay does not send them (trials VV, YY: a replay sent a later backfill's
    /// windows, and the children of a fan-out the other shard had done); not with `--all`.
    private static func leaveOutDoneElsewhere(
        _ selected: inout [LogLine], of history: TaskHistory, job: Job, options: inout Options,
        console: Console
    ) {
        guard !options.filter.all, !options.logs.isEmpty else { return }
        let folder =
            (options.logDirectoryGiven ? options.run.logDirectory : job.home.logs)
            .appendingPathComponent(job.name)
        let done = JobHistory.doneLater(
            than: options.logs, own: history.finals, folder: folder, siblings: true)
        options.run.doneElsewhere = done
        guard !done.isEmpty else { return }
        let before = selected.count
        selected.removeAll { line in
            line.job == job.name
                && line.task.map { done.contains(FNV1a.taskKey(job: line.job, task: $0)) } == true
        }
        let left = before - selected.count
        if left > 0, !options.run.quiet {
            console.error(
                "courier: \(job.name): \(left) task\(left == 1 ? "" : "s") a later run did, not sent again"
            )
        }
    }

    /// A cut run's tasks that never ended have no final line: replay cannot see them, and
    /// says so.
    static func warnIfCut(_ history: TaskHistory, options: Options, console: Console) {
        guard let cut = history.runs.last, !history.ended.contains(cut) else { return }
        let job = options.jobPath ?? "JOB.json"
        console.error(
            "courier: the last run (\(cut)) did not finish: replay re-sends the tasks that failed; `courier run \(job) --resume` sends every task not done"
        )
    }

    /// Says why nothing is replayed, and returns the exit status: an empty pipe is a filter
    /// that left nothing, not a log with no match (trial TTT); a task that ended ok matches no
    /// filter but `--all` (trial III read "no task matches" of one the log has). Every task
    /// ok but a records file not written is not done, and a replay writes none: exit 1, with
    /// the command that does (trial WWW: exit 0, and `report` said incomplete).
    static func nothingToReplay(_ history: TaskHistory, options: Options, console: Console)
        -> Int32
    {
        guard history.lineCount > 0 else {
            console.output("courier: nothing to replay: standard input held no log lines")
            return CommandLineInterface.ExitCode.success
        }
        let ok = options.filter.all ? "" : " that did not end ok (--all takes those too)"
        console.output("courier: nothing to replay: no task in the logs matches\(ok)")
        guard let path = options.jobPath, history.lastEndRecordsNotWritten > 0 else {
            return CommandLineInterface.ExitCode.success
        }
        let count = history.lastEndRecordsNotWritten
        let job = ShellWord.quoted(URL(fileURLWithPath: path).standardizedFileURL.path)
        console.error(
            "courier: the latest run of the logs could not write \(count) records file\(count == 1 ? "" : "s"), which a replay does not write: courier run \(job) --resume writes \(count == 1 ? "it" : "them") from the parts kept"
        )
        return CommandLineInterface.ExitCode.taskFailed
    }
}
