import Courier

/// The machine form of a report (`courier report --json`); its schema is in docs/report.md.
enum ReportJSON {
    static let schemaVersion = 1

    static func value(_ reports: [RunReport]) -> JSONWriter.Value {
        .object([
            ("schema", .string("courier.report/\(schemaVersion)")),
            ("jobs", .array(reports.map(job))),
        ])
    }

    /// The job's other lines of runs with tasks not done, each with the command that
    /// completes it (``RunReport/otherLines``).
    static func otherLines(_ report: RunReport, repair: ReportText.Repair) -> JSONWriter.Value {
        .array(
            report.otherLines.map { line in
                var members: [(String, JSONWriter.Value)] = [
                    ("log", .string(line.log)), ("notDone", .int(line.notDone)),
                ]
                if line.held > 0 { members.append(("heldRecords", .int(line.held))) }
                if line.unfinished { members.append(("unfinished", .bool(true))) }
                if let window = line.window { members.append(("window", .string(window))) }
                members.append(("next", .string(repair.resume(line.log))))
                return .object(members)
            })
    }

    /// Whether the job is complete, and if not, what it lacks and the command that repairs it.
    static func completeness(_ report: RunReport) -> [(String, JSONWriter.Value)] {
        let repair = ReportText.Repair(report)
        var fields: [(String, JSONWriter.Value)] = [
            ("complete", .bool(repair.complete && report.otherLines.isEmpty))
        ]
        // Failed backfills the history leaves out: `complete` said none (trial RR).
        if !report.otherLines.isEmpty {
            fields.append(("otherLines", otherLines(report, repair: repair)))
        }
        if !repair.complete {
            fields.append(("notDone", .int(repair.notDone)))
            fields.append(("heldWrites", .int(repair.heldWrites)))
            fields.append(("unfinishedRuns", .array(repair.killed.map { .string($0) })))
            if repair.recordsNotWritten > 0 {
                fields.append(("recordsNotWritten", .int(repair.recordsNotWritten)))
            }
            fields.append(("next", .string(repair.command)))
        } else if let other = report.otherLines.first {
            // The history is complete but another line is not: its repair is the next one (a
            // script reading `next` alone had nothing to run; trial UU).
            fields.append(("next", .string(repair.resume(other.log))))
        }
        return fields
    }

    static func job(_ report: RunReport) -> JSONWriter.Value {
        let tasks = report.outcomes
        var latency: [(String, JSONWriter.Value)] = [("totalMs", histogram(report.total))]
        for name in RunReport.phaseNames {
            if let phase = report.phases[name], !phase.isEmpty {
                latency.append((name, histogram(phase)))
            }
        }
        var fields: [(String, JSONWriter.Value)] = [("job", .string(report.job))]
        fields += completeness(report)
        fields += [
            ("runs", .array(report.runs.map { .string($0) })),
            ("backends", .array(report.backends.sorted().map { .string($0) })),
            (
                "tasks",
                .object([
                    ("total", .int(tasks.total)), ("ok", .int(tasks.ok)),
                    ("failed", .int(tasks.failed)), ("skipped", .int(tasks.skipped)),
                    ("notModified", .int(tasks.notModified)),
                ])
            ),
            ("requests", .int(report.requests)),
            ("retries", .int(report.retries)),
            (
                "throttled",
                .object([
                    ("requests", .int(report.throttledRequests)),
                    ("totalMs", .double(report.throttledMs)),
                ])
            ),
            (
                "blocked",
                .object([
                    ("requests", .int(report.blockedRequests)),
                    ("totalMs", .double(report.blockedMs)),
                ])
            ),
            (
                "attemptsPerTask",
                .object(
                    tasks.attemptsPerTask.sorted { $0.key < $1.key }.map {
                        (String($0.key), .int($0.value))
                    })
            ),
            ("wallSeconds", .double(report.wallSeconds)),
            ("requestsPerSecond", .double(report.requestsPerSecond)),
            ("unansweredWrites", .int(report.unansweredWrites)),
            (
                "statuses",
                .object(
                    report.statuses.sorted { $0.key < $1.key }.map {
                        (String($0.key), .int($0.value))
                    })
            ),
            (
                "errorKinds",
                .object(
                    report.errorKinds.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
            ),
            ("latency", .object(latency)),
            ("slowest", .array(tasks.slowest.map(task))),
            ("failed", .array(tasks.notOK.map(task))),
            ("failureGroups", .array(tasks.failureGroups.map(group))),
            ("runTable", .array(report.runTable.rows.map(run))),
        ]
        return .object(fields)
    }

    static func group(_ group: TaskOutcomes.FailureGroup) -> JSONWriter.Value {
        var fields: [(String, JSONWriter.Value)] = [("outcome", .string(group.outcome))]
        if let kind = group.errorKind { fields.append(("errorKind", .string(kind))) }
        fields += [
            ("message", .string(group.message)), ("count", .int(group.count)),
            ("first", .string(ReportTime.rfc3339(group.first))),
            ("last", .string(ReportTime.rfc3339(group.last))),
            ("tasks", .array(group.tasks.map { .string($0) })),
        ]
        return .object(fields)
    }

    static func run(_ row: RunTable.Row) -> JSONWriter.Value {
        var fields: [(String, JSONWriter.Value)] = [
            ("run", .string(row.run)), ("file", .string(row.file)),
            ("start", .string(ReportTime.rfc3339(row.start))), ("kind", .string(row.kind)),
        ]
        if let index = row.shardIndex, let count = row.shardCount {
            fields.append(("shard", .object([("index", .int(index)), ("count", .int(count))])))
        }
        if let planned = row.plannedTasks { fields.append(("plannedTasks", .int(planned))) }
        if row.fanOut { fields.append(("fanOut", .bool(true))) }
        fields += [
            ("state", .string(row.state.rawValue)), ("recordedTasks", .int(row.recordedTasks)),
        ]
        if let end = row.end {
            fields.append(("durationMs", .double(end.durationMs ?? row.seconds * 1000)))
            var counts: [(String, JSONWriter.Value)] = [
                ("total", .int(end.total ?? 0)), ("ok", .int(end.ok ?? 0)),
                ("failed", .int(end.failed ?? 0)),
            ]
            if let done = end.alreadyDone { counts.append(("alreadyDone", .int(done))) }
            if let ignored = end.ignored { counts.append(("ignored", .int(ignored))) }
            fields.append(("tasks", .object(counts)))
            if !end.checks.isEmpty {
                fields.append(
                    (
                        "checksFailed",
                        .array(end.checks.map { .string("\($0.check): \($0.message)") })
                    ))
            }
            if let code = end.exitCode { fields.append(("exitCode", .int(code))) }
        } else {
            // Killed: how far it is known to have got.
            fields.append(("lastLine", .string(ReportTime.rfc3339(row.lastTime))))
        }
        return .object(fields)
    }

    static func histogram(_ histogram: LatencyHistogram) -> JSONWriter.Value {
        .object([
            ("count", .int(Int(histogram.total))),
            ("p50", .double(histogram.percentile(50))), ("p90", .double(histogram.percentile(90))),
            ("p99", .double(histogram.percentile(99))),
            ("p999", .double(histogram.percentile(99.9))),
            ("max", .double(histogram.maxMilliseconds)),
            ("mean", .double(histogram.meanMilliseconds)),
        ])
    }

    static func task(_ task: TaskOutcomes.TaskResult) -> JSONWriter.Value {
        var fields: [(String, JSONWriter.Value)] = [
            ("task", .string(task.task)), ("outcome", .string(task.outcome)),
            ("attempts", .int(task.attempts)),
        ]
        if let status = task.status { fields.append(("status", .int(status))) }
        if let kind = task.errorKind { fields.append(("errorKind", .string(kind))) }
        if let message = task.message { fields.append(("message", .string(message))) }
        if let ms = task.totalMs { fields.append(("totalMs", .double(ms))) }
        return .object(fields)
    }
}
