import Foundation

/// The terminal form of a report: aligned, a screen or so per job.
enum ReportText {
    static func render(_ report: RunReport) -> String {
        var lines: [String] = []
        let runs = report.runs.count
        lines.append(
            "job \(report.job): \(runs) run\(runs == 1 ? "" : "s") (\(report.runs.joined(separator: ", "))), backend \(report.backends.sorted().joined(separator: ", "))"
        )
        let ok = report.taskCount - report.failedCount - report.skippedCount
        lines.append(
            "tasks     \(report.taskCount) total, \(ok) ok, \(report.failedCount) failed, \(report.skippedCount) skipped"
                + (report.notModified > 0 ? " (\(report.notModified) not modified)" : ""))
        lines.append(
            "requests  \(report.requests) (\(report.retries) retr\(report.retries == 1 ? "y" : "ies")), \(format(report.requestsPerSecond)) req/s over \(format(report.wallSeconds)) s"
        )
        if !report.attemptsPerTask.isEmpty {
            let parts = report.attemptsPerTask.sorted { $0.key < $1.key }.map {
                "\($0.key) ×\($0.value)"
            }
            lines.append("attempts  " + parts.joined(separator: ", ") + " (tasks by attempts)")
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
        lines.append("")
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
        if !report.slowest.isEmpty {
            lines.append("")
            lines.append("slowest tasks")
            for task in report.slowest {
                lines.append(
                    "  " + pad(format(task.totalMs ?? 0) + " ms", 12, right: true)
                        + "  \(task.task)")
            }
        }
        let failed = report.failedTasks
        if !failed.isEmpty {
            lines.append("")
            lines.append("failed tasks (last error)")
            for task in failed.prefix(20) {
                lines.append("  \(task.task): \(describe(task))")
            }
            if failed.count > 20 {
                lines.append("  … and \(failed.count - 20) more (--json lists all)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ task: RunReport.TaskResult) -> String {
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
