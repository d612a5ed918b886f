/// The machine form of a report (`courier report --json`); its schema is in docs/report.md.
enum ReportJSON {
    static let schemaVersion = 1

    static func value(_ reports: [RunReport]) -> JSONWriter.Value {
        .object([
            ("schema", .string("courier.report/\(schemaVersion)")),
            ("jobs", .array(reports.map(job))),
        ])
    }

    static func job(_ report: RunReport) -> JSONWriter.Value {
        let ok = report.taskCount - report.failedCount - report.skippedCount
        var latency: [(String, JSONWriter.Value)] = [("totalMs", histogram(report.total))]
        for name in RunReport.phaseNames {
            if let phase = report.phases[name], !phase.isEmpty {
                latency.append((name, histogram(phase)))
            }
        }
        return .object([
            ("job", .string(report.job)),
            ("runs", .array(report.runs.map { .string($0) })),
            ("backends", .array(report.backends.sorted().map { .string($0) })),
            (
                "tasks",
                .object([
                    ("total", .int(report.taskCount)), ("ok", .int(ok)),
                    ("failed", .int(report.failedCount)), ("skipped", .int(report.skippedCount)),
                    ("notModified", .int(report.notModified)),
                ])
            ),
            ("requests", .int(report.requests)),
            ("retries", .int(report.retries)),
            (
                "attemptsPerTask",
                .object(
                    report.attemptsPerTask.sorted { $0.key < $1.key }.map {
                        (String($0.key), .int($0.value))
                    })
            ),
            ("wallSeconds", .double(report.wallSeconds)),
            ("requestsPerSecond", .double(report.requestsPerSecond)),
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
            ("slowest", .array(report.slowest.map(task))),
            ("failed", .array(report.failedTasks.map(task))),
        ])
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

    static func task(_ task: RunReport.TaskResult) -> JSONWriter.Value {
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
