import Foundation
import Testing

@testable import CourierJobs

@Suite("report --since and the progress line of a fan-out")
struct ReportWindowTests {
    @Test("--since takes a span back from now or a UTC date or time; anything else is refused")
    func since() {
        let now = 1_800_000_000.0
        #expect(ReportWindow.start("36h", now: now) == now - 36 * 3600)
        #expect(ReportWindow.start("7d", now: now) == now - 7 * 86_400)
        #expect(ReportWindow.start("30m", now: now) == now - 1800)
        #expect(ReportWindow.start("2026-11-20", now: now) == 1_795_132_800)
        #expect(ReportWindow.start("2026-11-20T02:00Z", now: now) == Double(1_795_140_000))
        #expect(ReportWindow.start("2026-11-20T02:00:30Z", now: now) == Double(1_795_140_030))
        for bad in ["yesterday", "", "7", "-3d", "0h", "2026-13-40", "7w"] {
            #expect(ReportWindow.start(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test("while a fan-out finds tasks the line has no percentage or ETA, only a lower bound")
    func discoveringLine() {
        let progress = Progress(total: 14)
        for _ in 0..<10 { progress.taskFinished(ok: true, requests: 1) }
        progress.setDiscovering(true)
        let finding = progress.line()
        #expect(finding.hasPrefix("[10/14+]"), "\(finding)")
        #expect(!finding.contains("%") && !finding.contains("ETA"), "\(finding)")
        #expect(finding.contains("finding more tasks"))
        progress.setDiscovering(false)
        let known = progress.line()
        #expect(known.hasPrefix("[10/14] 71%"), "\(known)")
        #expect(known.contains("ETA"))
    }

    @Test("a killed fan-out run's count says how many were recorded, not 'of at least'")
    func killedFanOut() {
        var table = RunTable()
        var start = LogLine.RunFields()
        start.plannedTasks = 2
        start.fanOut = true
        table.add(Self.line("run.start", fields: start), file: "a.jsonl")
        for index in 0..<27 {
            var line = Self.line("request")
            line.task = "t\(index)"
            line.outcome = "ok"
            table.add(line, file: "a.jsonl")
        }
        let summary = table.killed.first?.killedSummary ?? ""
        #expect(summary.contains("killed: 27 tasks recorded"), "\(summary)")
        #expect(!summary.contains("of at least"), "\(summary)")
    }

    static func line(_ event: String, fields: LogLine.RunFields? = nil) -> LogLine {
        let text =
            #"{"event":"\#(event)","ts":"2026-11-20T02:00:00.000Z","run":"r1","job":"j"}"#
        var line = LogLine(bytes: Array(text.utf8)[...])!
        line.runFields = fields
        return line
    }
}
