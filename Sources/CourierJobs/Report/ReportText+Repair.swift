import Foundation

extension ReportText {
    /// Whether the logs leave the job done, and the command that repairs it if not: the text
    /// report's `next` line and the JSON's `complete`, `notDone` and `next` say the same.
    struct Repair {
        /// Tasks whose final line is not `ok` (failed, skipped, or cut by a killed run).
        var notDone: Int
        /// Killed runs, and runs stopped (a signal, a deadline) before some of their tasks
        /// started, that no resume or replay went on from: their unreached tasks have no line,
        /// so no count of them can be told from the lines.
        var killed: [String]
        /// `courier run JOB.json --resume`, with the job file as the latest run named it.
        var command: String
        /// `courier show` of a task not done, from the job file: what went wrong with it.
        var show: String
        /// `run --base-url` of the latest run, which the repair names too.
        var baseURL: String?

        /// The command that completes the line of runs whose first log is `log`
        /// (``RunReport/otherLines``): the job's `--resume`, naming it.
        func resume(_ log: String) -> String {
            let prefix =
                command.components(separatedBy: " --resume").first ?? "courier run JOB.json"
            let base = baseURL.map { " --base-url \(ShellWord.quoted($0))" } ?? ""
            return "\(prefix) --resume \(ShellWord.quoted(log))\(base)"
        }
        /// Of ``notDone``, the writes that command would not send again (``WriteRule``): a 2xx
        /// answered them, they went out without their key and no answer came, or the latest
        /// repair held them (another task's write sent their request).
        var heldWrites: Int
        /// Whether the unfinished runs were all stopped (a signal, a deadline), none killed.
        var stoppedOnly = false
        /// No whole run of the job among the logs (only `--task` runs or replays, or not every
        /// shard of the latest split), and no whole-job resume that ended: the tasks no run
        /// reached have no line (a trial's report said complete with three never run).
        var noWholeRun = false
        /// Records files the latest run could not write, which its `--resume` writes from the
        /// parts kept (trial UUU: every task ok, exit 1, and the report said complete).
        var recordsNotWritten = 0
        var complete: Bool {
            notDone == 0 && killed.isEmpty && !noWholeRun && recordsNotWritten == 0
        }

        init(_ report: RunReport) {
            notDone = report.outcomes.failed + report.outcomes.skipped
            recordsNotWritten = report.history.lastEndRecordsNotWritten
            heldWrites = WriteRule.heldOnRepair(report.history)
            // Of the current history only: a run cut before the latest plain run is behind it
            // (a trial's report named a cut night as unfinished for ever after).
            let unfinished = report.runTable.unfinished.filter {
                report.currentRuns.contains($0.run) && report.runTable.continuation(of: $0) == nil
            }
            killed = unfinished.map(\.run)
            stoppedOnly = unfinished.allSatisfy { $0.state != .killed }
            // The history's own judgement where there is one (trial XX: the runs table counted
            // last night's shard as tonight's, and a night one shard never ran read complete).
            noWholeRun =
                report.historyWhole.map { !$0 } ?? ReportText.lacksWholeRun(report.runTable.rows)
            // A replay of logs alone names no job file ("-", and in logs before it left its
            // path out, that made absolute): the job's own runs do.
            let latest = report.runTable.rows.last {
                guard let file = $0.jobFile else { return false }
                return file != "-" && !file.hasSuffix("/-")
            }
            let file = latest?.jobFile
            command =
                file.map {
                    $0 == "<stdin>"
                        ? "courier run - --resume" : "courier run \(ShellWord.quoted($0)) --resume"
                }
                ?? "courier run JOB.json --resume"
            let repairs = notDone > 0 || !killed.isEmpty
            if let log = Self.logToResume(report, unfinished: unfinished, repairs: repairs) {
                command += " \(ShellWord.quoted(log))"
            }
            // The server the latest run was sent to, when `--base-url` named it (trial PP:
            // the report's repair went to the file's).
            baseURL = latest?.baseURL
            if let baseURL { command += " --base-url \(ShellWord.quoted(baseURL))" }
            // A task not done and the job file, when known (trial S: the HTML report said
            // `courier show LOG TASK`, words to fill in).
            let job = file.flatMap { $0 == "<stdin>" ? nil : ShellWord.quoted($0) } ?? "LOG"
            let task = report.outcomes.notOK.first.map { ShellWord.quoted($0.task) } ?? "TASK"
            show = "courier show \(job) \(task)"
        }

        /// The log a repair names, when `--resume` alone would complete another run: a
        /// backfill's, as its summary names it (after the next night, `--resume` alone
        /// completes the night; of a sharded backfill, a shard's log nothing went on from,
        /// whose resume reads the rest of its split with it, ``JobHistory/split(of:among:)``),
        /// or an older night's, which a later night has followed, or that a resume of it goes
        /// on with (trials BBB, DDD: the older night's write was lost). `repairs`: the logs
        /// leave tasks not done, or a run cut short.
        private static func logToResume(
            _ report: RunReport, unfinished: [RunTable.Row], repairs: Bool
        ) -> String? {
            let current = report.runTable.rows.filter { report.currentRuns.contains($0.run) }
            let plain = current.filter { $0.kind == "run" }
            let path = { (file: String) in URL(fileURLWithPath: file).standardizedFileURL.path }
            if let newest = plain.last, newest.window != nil {
                let backfill =
                    plain.first { row in
                        row.window == newest.window && unfinished.contains { $0.run == row.run }
                    } ?? newest
                return path(backfill.file)
            }
            guard repairs,
                let root = plain.last?.file
                    ?? current.last(where: { $0.kind == "resume" })?
                    .resumedRoot,
                JobHistory.precedes(
                    root, folder: URL(fileURLWithPath: root).deletingLastPathComponent())
            else { return nil }
            return path(root)
        }
    }
}
