import Foundation

/// One self-contained HTML page per report (no scripts, fonts or links to fetch): the summary,
/// and four inline SVG charts: latency over time, the latency distribution, statuses and
/// errors, and requests per second.
enum ReportHTML {
    static func render(_ reports: [RunReport]) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>courier report</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:24px;color:#1d2330;background:#fff}
            h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:14px;margin:18px 0 6px}
            table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #e3e6ec}
            th:first-child,td:first-child{text-align:left}.grid{display:flex;flex-wrap:wrap;gap:18px}
            .chart{border:1px solid #e3e6ec;border-radius:6px;padding:8px}svg text{font-size:11px;fill:#4a5263}
            .fail{color:#b42318}.warn{color:#7a2e0e;background:#fef0c7;border:1px solid #f79009;border-radius:6px;padding:8px 12px}
            td.text,th.text{text-align:left}
            </style></head><body>
            <h1>courier report</h1>

            """
        for report in reports { html += job(report) }
        return html + "</body></html>\n"
    }

    static func job(_ report: RunReport) -> String {
        let tasks = report.outcomes
        var html = "<h2>job \(escape(report.job))</h2>\n"
        html +=
            "<p>\(report.runs.count) run(s): \(escape(report.runs.joined(separator: ", "))) · backend \(escape(report.backends.sorted().joined(separator: ", ")))</p>\n"
        // First, before any figure: a killed run's figures look complete and are not; then
        // what is not done, what to run about it, and the failures, before any chart.
        for row in report.runTable.killed {
            html +=
                "<p class=\"warn\">\(escape(ReportText.unfinished(row, in: report.runTable)))</p>\n"
        }
        if let next = ReportText.nextStep(report) {
            let text = next.dropFirst("next".count).trimmingCharacters(in: .whitespaces)
            html += "<p class=\"warn\"><b>next:</b> \(escape(text))</p>\n"
        }
        html += failures(tasks.failureGroups)
        // Red only for something that went wrong: zero failures are not an alarm.
        func count(_ value: Int) -> String {
            value > 0 ? "<td class=\"fail\">\(value)</td>" : "<td>\(value)</td>"
        }
        html +=
            "<h3>tasks (each once, by its last final line)</h3><table><tr><th>total</th><th>ok</th><th>not modified</th><th>failed</th><th>skipped</th></tr>"
        html +=
            "<tr><td>\(tasks.total)</td><td>\(tasks.ok)</td><td>\(tasks.notModified)</td>\(count(tasks.failed))\(count(tasks.skipped))</tr></table>\n"
        html +=
            "<h3>requests (every attempt of every run)</h3><table><tr><th>requests</th><th>retries</th><th>req/s</th><th>over</th><th>waited for hosts</th><th>waited before going out</th></tr>"
        html +=
            "<tr><td>\(report.requests)</td><td>\(report.retries)</td><td>\(ReportText.format(report.requestsPerSecond))</td><td>\(ReportText.format(report.wallSeconds)) s</td><td>\(ReportText.format(report.throttledMs / 1000)) s (\(report.throttledRequests))</td><td>\(ReportText.format(report.blockedMs / 1000)) s (\(report.blockedRequests))</td></tr></table>\n"
        html += runs(report.runTable)
        html +=
            "<h3>latency (ms, every attempt)</h3><table><tr><th></th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>"
        var rows: [(String, LatencyHistogram)] = [("total", report.total)]
        for name in RunReport.phaseNames {
            if let phase = report.phases[name], !phase.isEmpty { rows.append((name, phase)) }
        }
        for (name, histogram) in rows {
            let cells =
                ([50, 90, 99, 99.9].map { histogram.percentile($0) } + [histogram.maxMilliseconds])
                .map { "<td>\(ReportText.format($0))</td>" }.joined()
            html += "<tr><td>\(name)</td>\(cells)</tr>"
        }
        html += "</table>\n<div class=\"grid\">\n"
        html += chart("Latency over time (UTC)", scatter(report))
        html += chart("Latency distribution", distribution(report.total))
        html += chart("Statuses (every attempt) and error kinds", breakdown(report))
        html += chart("Requests per second (UTC)", timeline(report))
        html += "</div>\n"
        if !tasks.slowest.isEmpty {
            html +=
                "<h3>slowest tasks (final attempt)</h3><table><tr><th>task</th><th>ms</th><th>attempts</th><th>status</th></tr>"
            for task in tasks.slowest {
                html +=
                    "<tr><td>\(escape(task.task))</td><td>\(ReportText.format(task.totalMs ?? 0))</td><td>\(task.attempts)</td><td>\(task.status.map(String.init) ?? "-")</td></tr>"
            }
            html += "</table>\n"
        }
        return html
    }

    /// One row per run: when, how long, what kind, which shard, and how it ended.
    static func runs(_ table: RunTable) -> String {
        var html =
            "<h3>runs</h3><table><tr><th>run</th><th>start (UTC)</th><th>duration</th><th>kind</th><th>shard</th><th class=\"text\">tasks</th></tr>"
        for row in table.rows {
            let outcome = escape(ReportText.outcome(row))
            html +=
                "<tr><td>\(escape(row.run))</td><td>\(ReportTime.display(row.start))</td><td>\(escape(ReportText.duration(row)))</td><td>\(row.shownKind)</td><td>\(row.shard ?? "-")</td>"
                + (row.state == .killed
                    ? "<td class=\"text fail\">\(outcome)</td></tr>"
                    : "<td class=\"text\">\(outcome)</td></tr>")
        }
        return html + "</table>\n"
    }

    /// Failed and skipped tasks, one row per kind of failure.
    static func failures(_ groups: [TaskOutcomes.FailureGroup]) -> String {
        guard !groups.isEmpty else { return "" }
        var html =
            "<h3>failures (tasks by last error)</h3><table><tr><th>tasks</th><th class=\"text\">error</th><th>first (UTC)</th><th>last (UTC)</th><th class=\"text\">some of them</th></tr>"
        for group in groups.prefix(100) {
            html +=
                "<tr><td class=\"fail\">\(group.count)</td><td class=\"text\">\(escape(ReportText.describe(group)))</td><td>\(ReportTime.display(group.first))</td><td>\(ReportTime.display(group.last))</td><td class=\"text\">\(escape(ReportText.ids(group)))</td></tr>"
        }
        html += "</table>"
        if groups.count > 100 { html += "<p>… and \(groups.count - 100) more kinds</p>" }
        return html + "\n"
    }

    static let width = 460.0
    static let height = 240.0
    static let left = 48.0
    /// Room under the plot for the tick labels, and under them the axis title.
    static let bottom = 40.0
    /// Room over the plot for the y axis's title and the legend.
    static let top = 24.0

    static func chart(_ title: String, _ svg: String) -> String {
        "<div class=\"chart\"><h3>\(title)</h3>\(svg)</div>\n"
    }

    /// Labels for a time axis from `first` to `last` (seconds since 1970): the UTC date and
    /// time at the left end, times of day in the middle and at the right end.
    static func timeTicks(from first: Double, to last: Double) -> [(x: Double, label: String)] {
        let start = ReportTime.display(first)
        let end = ReportTime.display(last)
        let sameDay = start.prefix(10) == end.prefix(10)
        var ticks = [(left, start)]
        if sameDay, last - first >= 2 {
            ticks.append(((left + width - 8) / 2, ReportTime.clock((first + last) / 2)))
        }
        if end != start { ticks.append((width - 8, sameDay ? ReportTime.clock(last) : end)) }
        return ticks
    }

    /// A whole value as a whole number (`2`, not `2.00`), any other as the report writes it.
    static func tickLabel(_ value: Double) -> String {
        value == value.rounded() && value < 1e15 ? String(Int(value)) : ReportText.format(value)
    }

    /// A chart's axes, grid, tick labels and titles around `body`: the y title over the axis,
    /// the x tick labels under the plot and the x title under them (none overlaps another),
    /// and a legend (label and colour) at the top right.
    static func frame(
        _ body: String, yMax: Double, yLabel: String, xLabel: String = "",
        xTicks: [(x: Double, label: String)] = [], legend: [(String, String)] = []
    ) -> String {
        let plotBottom = height - bottom
        var svg =
            "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(width))' height='\(Int(height))' viewBox='0 0 \(Int(width)) \(Int(height))'>"
        svg +=
            "<line x1='\(left)' y1='\(top)' x2='\(left)' y2='\(plotBottom)' stroke='#9aa3b2'/><line x1='\(left)' y1='\(plotBottom)' x2='\(width - 8)' y2='\(plotBottom)' stroke='#9aa3b2'/>"
        for step in 0...4 {
            let y = plotBottom - (plotBottom - top) * Double(step) / 4
            svg +=
                "<text x='\(left - 4)' y='\(y + 4)' text-anchor='end'>\(tickLabel(yMax * Double(step) / 4))</text><line x1='\(left)' y1='\(y)' x2='\(width - 8)' y2='\(y)' stroke='#eef0f4'/>"
        }
        for tick in xTicks {
            let anchor = tick.x <= left ? "start" : tick.x >= width - 8 ? "end" : "middle"
            svg +=
                "<line x1='\(round(tick.x))' y1='\(plotBottom)' x2='\(round(tick.x))' y2='\(plotBottom + 4)' stroke='#9aa3b2'/><text x='\(round(tick.x))' y='\(plotBottom + 16)' text-anchor='\(anchor)'>\(tick.label)</text>"
        }
        if !xLabel.isEmpty {
            svg +=
                "<text x='\((left + width - 8) / 2)' y='\(height - 4)' text-anchor='middle' font-weight='600'>\(xLabel)</text>"
        }
        svg += "<text x='4' y='14' font-weight='600'>\(yLabel)</text>"
        svg += legendItems(legend, right: width - 8, y: 14)
        return svg + body + "</svg>"
    }

    /// Legend entries (a label and its colour), right-aligned on one line.
    static func legendItems(_ items: [(String, String)], right: Double, y: Double) -> String {
        var svg = ""
        var x = right
        for (label, color) in items.reversed() {
            let textWidth = Double(label.count) * 6.2
            x -= textWidth
            svg += "<text x='\(round(x))' y='\(y)'>\(escape(label))</text>"
            x -= 14
            svg +=
                "<rect x='\(round(x))' y='\(y - 9)' width='10' height='10' fill='\(color)'/>"
            x -= 12
        }
        return svg
    }

    static func scatter(_ report: RunReport) -> String {
        let points = report.sample
        guard !points.isEmpty else { return "<p>no requests</p>" }
        let span = max(0.001, report.lastTime - report.firstTime)
        // The top of the axis is p99.9, so that one outlier does not flatten the rest.
        let yMax = max(0.001, report.total.percentile(99.9) * 1.1)
        var body = ""
        for point in points {
            let x = left + (width - 8 - left) * (point.time - report.firstTime) / span
            let y = (height - bottom) - (height - bottom - top) * min(1, point.milliseconds / yMax)
            let color = point.ok ? "#2f6fde" : "#d92d20"
            body +=
                "<circle cx='\(round(x))' cy='\(round(y))' r='2' fill='\(color)' fill-opacity='0.6'/>"
        }
        return frame(
            body, yMax: yMax, yLabel: "latency (ms)", xLabel: "time each attempt was sent (UTC)",
            xTicks: timeTicks(from: report.firstTime, to: report.firstTime + span),
            // Only the colours the chart shows: a clean run's page has no red.
            legend: [("ok", "#2f6fde")]
                + (points.contains { !$0.ok } ? [("failed or retried", "#d92d20")] : []))
    }

    static func distribution(_ histogram: LatencyHistogram) -> String {
        guard !histogram.isEmpty else { return "<p>no requests</p>" }
        // Coarser bins for the eye: about 30 over the range up to p99.9.
        let top = max(0.001, histogram.percentile(99.9))
        let binCount = 30
        let plotTop = Self.top
        var bins = [UInt64](repeating: 0, count: binCount)
        for bucket in histogram.buckets {
            let index = min(binCount - 1, Int(bucket.from / top * Double(binCount)))
            bins[index] += bucket.count
        }
        // A whole number of attempts at each of the axis's four steps (trial S: 0.50, 1.50).
        let most = (Double(bins.max() ?? 1) / 4).rounded(.up) * 4
        let barWidth = (width - 8 - left) / Double(binCount)
        var body = ""
        for (index, count) in bins.enumerated() where count > 0 {
            let barHeight = (height - bottom - plotTop) * Double(count) / most
            body +=
                "<rect x='\(round(left + Double(index) * barWidth + 1))' y='\(round(height - bottom - barHeight))' width='\(round(barWidth - 2))' height='\(round(barHeight))' fill='#2f6fde'/>"
        }
        // Ticks at the bins' edges: 0, a quarter, half, three quarters and the top, in ms.
        let ticks = (0...4).map { step -> (x: Double, label: String) in
            (
                left + (width - 8 - left) * Double(step) / 4,
                ReportText.format(top * Double(step) / 4)
            )
        }
        return frame(
            body, yMax: most, yLabel: "attempts",
            xLabel:
                "latency (ms), \(binCount) bins of \(ReportText.format(top / Double(binCount))) ms",
            xTicks: ticks)
    }

    static func breakdown(_ report: RunReport) -> String {
        var rows = report.statuses.sorted { $0.key < $1.key }.map {
            ("\($0.key)", $0.value, report.failedStatuses[$0.key] == nil)
        }
        rows += report.errorKinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value, false) }
        guard !rows.isEmpty else { return "<p>no requests</p>" }
        let shown = rows.prefix(10)
        let most = Double(shown.map(\.1).max() ?? 1)
        let rowHeight = min(22.0, (height - top - 24) / Double(shown.count))
        var svg =
            "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(width))' height='\(Int(height))' viewBox='0 0 \(Int(width)) \(Int(height))'>"
        svg += "<text x='4' y='14' font-weight='600'>status or error kind</text>"
        svg += legendItems(
            (shown.contains { $0.2 } ? [("as the job expects", "#12b76a")] : [])
                + (shown.contains { !$0.2 } ? [("failed or retried", "#d92d20")] : []),
            right: width - 8, y: 14)
        svg +=
            "<text x='\((116 + width - 8) / 2)' y='\(height - 4)' text-anchor='middle' font-weight='600'>attempts</text>"
        for (index, row) in shown.enumerated() {
            let y = top + Double(index) * rowHeight
            let barWidth = max(1, (width - 180) * Double(row.1) / most)
            svg +=
                "<text x='110' y='\(y + rowHeight * 0.7)' text-anchor='end'>\(escape(row.0))</text><rect x='116' y='\(y + 2)' width='\(round(barWidth))' height='\(round(rowHeight - 4))' fill='\(row.2 ? "#12b76a" : "#d92d20")'/><text x='\(round(120 + barWidth))' y='\(y + rowHeight * 0.7)'>\(row.1)</text>"
        }
        return svg + "</svg>"
    }

    static func timeline(_ report: RunReport) -> String {
        guard !report.perSecond.isEmpty else { return "<p>no requests</p>" }
        let first = report.perSecond.keys.min()!
        let last = report.perSecond.keys.max()!
        let seconds = last - first + 1
        // At most 120 columns: each one the mean rate over its seconds.
        let perColumn = max(1, Int((Double(seconds) / 120).rounded(.up)))
        let columns = (seconds + perColumn - 1) / perColumn
        var rates = [Double](repeating: 0, count: columns)
        for (second, count) in report.perSecond {
            rates[(second - first) / perColumn] += Double(count) / Double(perColumn)
        }
        let most = max(1, rates.max() ?? 1)
        let step = (width - 8 - left) / Double(max(1, columns - 1))
        let points = rates.enumerated().map { index, rate in
            "\(round(left + Double(index) * step)),\(round((height - bottom) - (height - bottom - top) * rate / most))"
        }.joined(separator: " ")
        let body =
            columns == 1
            ? "<circle cx='\(left + 4)' cy='\(round((height - bottom) - (height - bottom - top) * rates[0] / most))' r='3' fill='#2f6fde'/>"
            : "<polyline points='\(points)' fill='none' stroke='#2f6fde' stroke-width='2'/>"
        return frame(
            body, yMax: most, yLabel: "requests per second",
            xLabel: perColumn == 1
                ? "time (UTC)" : "time (UTC), each point the mean of \(perColumn) s",
            xTicks: timeTicks(from: Double(first), to: Double(last)))
    }

    static func round(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            default: output.append(character)
            }
        }
        return output
    }
}
