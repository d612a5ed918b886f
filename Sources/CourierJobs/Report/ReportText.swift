import Foundation

/// The terminal form of a report: aligned, a screen or so per job.
enum ReportText {
    /// A killed run, and what went on from it: a resume or replay after it, or nothing yet.
    static func unfinished(_ row: RunTable.Row, in table: RunTable) -> String {
        let after =
            table.continuation(of: row).map { "; the \($0.shownKind) \($0.run) went on from it" }
            ?? ""
        return "unfinished run \(row.run) (\(row.file)): \(row.killedSummary)\(after)"
    }

    /// What the logs leave the job lacking, in words.
    private static func lacking(_ repair: Repair) -> String {
        if repair.notDone > 0 {
            // The count is of the lines: a killed run's unreached tasks have none (trial JJ:
            // "2 tasks not done" where 21 windows were).
            return "\(repair.notDone) task\(repair.notDone == 1 ? "" : "s") not done"
                + (repair.killed.isEmpty ? "" : ", besides those a killed run never reached")
        }
        if !repair.killed.isEmpty {
            return repair.stoppedOnly
                ? "a run stopped before it reached every task" : "a run was killed before its end"
        }
        if repair.noWholeRun {
            return
                "no whole run of the job yet (only --task runs or replays, or not every shard), so the tasks no run reached are not known"
        }
        let count = repair.recordsNotWritten
        return count == 1 ? "1 records file not written" : "\(count) records files not written"
    }

    /// What to do about the tasks the logs leave not done: the command that repairs them (the
    /// job file as the latest run named it), or `nil` when every task is done.
    static func nextStep(_ report: RunReport, repair: Repair? = nil) -> String? {
        let repair = repair ?? Repair(report)
        let others = report.otherLines.map { $0.note(resume: repair.resume($0.log)) }
        let other = others.isEmpty ? nil : others.joined(separator: "; ")
        guard !repair.complete else { return other.map { "next      " + $0 } }
        let what = lacking(repair)
        let held =
            repair.heldWrites == 0
            ? ""
            : " (it will not send again \(repair.heldWrites) failed write\(repair.heldWrites == 1 ? "" : "s") the server took or may have taken (answered 2xx, or no answer came): check the server, then name \(repair.heldWrites == 1 ? "it" : "each") with --task ID)"
        return
            "next      \(what): \(repair.command) runs what the history lacks\(held); \(repair.show) shows a task's attempts"
            + (other.map { "; " + $0 } ?? "")
    }

    /// Whether `rows` hold no whole run of the job: no plain run, or not one of every shard of
    /// the latest split, and no resume of the whole job that ended.
    static func lacksWholeRun(_ rows: [RunTable.Row]) -> Bool {
        let resumed = rows.contains {
            $0.kind == "resume" && $0.shardCount == nil && $0.end != nil
                && $0.end?.interrupted == false
        }
        let plain = rows.filter { $0.kind == "run" }
        guard let latest = plain.last else { return !resumed }
        guard let count = latest.shardCount else { return false }
        let shards = Set(plain.filter { $0.shardCount == count }.compactMap(\.shardIndex))
        return shards.count < count && !resumed
    }

    static func render(_ report: RunReport) -> String {
        var lines: [String] = []
        let runs = report.runs.count
        let tasks = report.outcomes
        lines.append(
            "job \(report.job): \(runs) run\(runs == 1 ? "" : "s") (\(report.runs.joined(separator: ", "))), backend \(report.backends.sorted().joined(separator: ", "))"
        )
        // First, before any figure: a killed run's figures look complete and are not.
        for row in report.runTable.killed {
            lines.append(unfinished(row, in: report.runTable))
        }
        // Once: it reads the whole history's writes.
        let repair = Repair(report)
        if let next = nextStep(report, repair: repair) { lines.append(next) }
        lines += counts(report, cut: !repair.killed.isEmpty)
        lines.append("")
        lines += runTable(report.runTable)
        lines.append("")
        lines += latency(report)
        lines += slowestAndFailures(tasks)
        // A line each, whatever the ids and messages hold: a newline in a captured value
        // must not forge a line of the report (trial K).
        return lines.map(\.showingControlCharacters).joined(separator: "\n")
    }

    /// Tasks, attempts, requests, waits, statuses and errors: a line each.
    /// - Parameter cut: whether a cut run is in the history (``Repair/killed``).
    static func counts(_ report: RunReport, cut: Bool) -> [String] {
        var lines: [String] = []
        let runs = report.runs.count
        let tasks = report.outcomes
        // A cut run's unreached tasks have no line: "total" would read as the job's size
        // (a trial took "8 total" for all there was, of a job of 20).
        lines.append(
            "tasks     \(tasks.total) \(cut ? "recorded (a cut run's unreached tasks have no line)" : "total"), \(tasks.ok) ok, \(tasks.failed) failed, \(tasks.skipped) skipped"
                + (tasks.notModified > 0 ? " (\(tasks.notModified) not modified)" : "")
                + (runs > 1 ? "; each task once, by its last final line" : ""))
        if !tasks.attemptsPerTask.isEmpty {
            let parts = tasks.attemptsPerTask.sorted { $0.key < $1.key }.map {
                "\($0.key) ×\($0.value)"
            }
            lines.append("attempts  " + parts.joined(separator: ", ") + " (tasks by attempts)")
        }
        // A rate needs a span: one request, or all in one millisecond, has none to speak of
        // (a trial read "1000 req/s over 0.00 s" for a single request).
        let rate =
            report.requests > 1 && report.wallSeconds >= 0.01
            ? ", \(format(report.requestsPerSecond)) req/s over \(format(report.wallSeconds)) s"
            : ""
        lines.append(
            "requests  \(report.requests) (\(report.retries) retr\(report.retries == 1 ? "y" : "ies"))\(rate)"
                + (runs > 1 ? "; these and the figures below count every attempt of every run" : "")
        )
        if report.unansweredWrites > 0 {
            let count = report.unansweredWrites
            lines.append(
                "writes    \(count) sent with no answer logged (a run was cut while \(count == 1 ? "it was" : "they were") under way: the server may have taken \(count == 1 ? "it" : "them"); not counted above)"
            )
        }
        if report.blockedRequests > 0 {
            lines.append(
                "waited    \(report.blockedRequests) request\(report.blockedRequests == 1 ? "" : "s") waited \(format(report.blockedMs / 1000)) s in all before they went out, or a stop kept them (rate limit and hosts' pauses; not in their times)"
            )
        }
        if report.throttledRequests > 0 {
            lines.append(
                "throttled \(report.throttledRequests) request\(report.throttledRequests == 1 ? "" : "s") waited \(format(report.throttledMs / 1000)) s in all for their hosts (Retry-After, rate-limit quotas, pace after 429s)"
            )
        }
        if !report.statuses.isEmpty {
            let parts = report.statuses.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            lines.append("statuses  " + parts.joined(separator: ", "))
        }
        if !report.errorKinds.isEmpty {
            let parts = report.errorKinds.sorted { $0.key < $1.key }.map {
                "\($0.key) ×\($0.value)"
            }
            lines.append("errors    " + parts.joined(separator: ", "))
        }
        return lines
    }

    /// The latency percentiles, overall and per phase.
    static func latency(_ report: RunReport) -> [String] {
        var lines: [String] = []
        lines.append(
            pad("latency ms", 12)
                + ["p50", "p90", "p99", "p99.9", "max"].map { pad($0, 10, right: true) }
                .joined())
        var rows: [(String, LatencyHistogram)] = [("total", report.total)]
        for name in RunReport.phaseNames {
            if let histogram = report.phases[name], !histogram.isEmpty {
                rows.append((name.replacingOccurrences(of: "Ms", with: ""), histogram))
            }
        }
        for (name, histogram) in rows {
            let values =
                [50, 90, 99, 99.9].map { histogram.percentile($0) } + [histogram.maxMilliseconds]
            lines.append(pad(name, 12) + values.map { pad(format($0), 10, right: true) }.joined())
        }
        return lines
    }

    /// The slowest tasks, and the failures grouped by error (the first 20 kinds).
    static func slowestAndFailures(_ tasks: TaskOutcomes) -> [String] {
        var lines: [String] = []
        if !tasks.slowest.isEmpty {
            lines.append("")
            lines.append("slowest tasks (final attempt)")
            for task in tasks.slowest {
                lines.append(
                    "  " + pad(format(task.totalMs ?? 0) + " ms", 12, right: true)
                        + "  \(task.task)")
            }
        }
        if !tasks.failureGroups.isEmpty {
            lines.append("")
            lines.append("failures (tasks by last error)")
            for group in tasks.failureGroups.prefix(20) {
                lines.append("  \(pad(String(group.count), 5, right: true)) × \(describe(group))")
                lines.append("          \(span(group)): \(ids(group))")
            }
            if tasks.failureGroups.count > 20 {
                lines.append(
                    "  … and \(tasks.failureGroups.count - 20) more kinds (--json lists all)")
            }
        }
        return lines
    }

    /// One line per run: when, how long, what kind, which shard, and how it ended.
    static func runTable(_ table: RunTable) -> [String] {
        var lines = [
            "runs        " + pad("start (UTC)", 22) + pad("duration", 10, right: true) + "  "
                + pad("kind", 10) + pad("shard", 7) + "tasks"
        ]
        for row in table.rows {
            lines.append(
                "  " + pad(row.run, 10) + pad(ReportTime.display(row.start), 22)
                    + pad(duration(row), 10, right: true) + "  " + pad(row.shownKind, 10)
                    + pad(row.shard ?? "-", 7) + outcome(row))
        }
        return lines
    }

    /// `11.0 s`; `≥ 9.99 s` for a killed run, known only up to its last line.
    static func duration(_ row: RunTable.Row) -> String {
        (row.state == .killed ? "≥ " : "") + format(row.seconds) + " s"
    }

    /// What a run's `run.end` says of its tasks, or that there is none.
    static func outcome(_ row: RunTable.Row) -> String {
        guard let end = row.end else { return row.killedSummary }
        // `run.end` counts a skipped task as failed; the tasks line above counts it apart.
        let skipped = min(row.skippedTasks, end.failed ?? 0)
        var text =
            "\(end.total ?? 0) total, \(end.ok ?? 0) ok, \((end.failed ?? 0) - skipped) failed"
        if skipped > 0 { text += ", \(skipped) skipped" }
        if let done = end.alreadyDone { text += ", \(done) done before" }
        if let ignored = end.ignored { text += ", \(ignored) ignored by onResponse" }
        if let code = end.exitCode { text += " (exit \(code))" }
        if !end.checks.isEmpty {
            text +=
                "; data checks failed: "
                + end.checks.map { "\($0.check): \($0.message)" }.joined(separator: "; ")
        }
        return row.state == .interrupted ? "interrupted: " + text : text
    }

    /// `unexpectedStatus: status 500, expected 2xx`.
    static func describe(_ group: TaskOutcomes.FailureGroup) -> String {
        if group.outcome == "skipped" { return "skipped: " + group.message }
        guard let kind = group.errorKind else { return group.message }
        return group.message.isEmpty ? kind : "\(kind): \(group.message)"
    }

    /// The first and last time a group's tasks failed.
    static func span(_ group: TaskOutcomes.FailureGroup) -> String {
        let first = ReportTime.display(group.first)
        let last = ReportTime.display(group.last)
        if last == first { return first }
        // The date once when both fall on one day.
        return first + " … "
            + (last.prefix(10) == first.prefix(10) ? ReportTime.clock(group.last) : last)
    }

    /// A few ids of a group's tasks.
    static func ids(_ group: TaskOutcomes.FailureGroup) -> String {
        let more = group.count - group.tasks.count
        return group.tasks.joined(separator: ", ") + (more > 0 ? " and \(more) more" : "")
    }

    /// `25001` as `25,001`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var output = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { output.append(",") }
            output.append(digit)
        }
        return (value < 0 ? "-" : "") + output
    }

    static func describe(_ task: TaskOutcomes.TaskResult) -> String {
        if task.outcome == "skipped" {
            // Nothing was sent: the reason is the whole story.
            return "skipped: " + (task.message ?? "an input task did not succeed")
        }
        var text = task.errorKind ?? ""
        if let message = task.message { text += text.isEmpty ? message : ": \(message)" }
        if text.isEmpty, let status = task.status { text = "status \(status)" }
        return text + " (attempt \(task.attempts))"
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        return String(format: value >= 10 ? "%.1f" : "%.2f", value)
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let space = String(repeating: " ", count: max(0, width - text.count))
        return right ? space + text : text + space
    }
}
