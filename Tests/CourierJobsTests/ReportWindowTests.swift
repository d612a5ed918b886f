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

    /// Trial UUU: `report --last 1` of a job whose newest log was a replay of a log alone
    /// reported "tasks 0 total", with `courier run JOB.json --resume` to fill in. Trial WWW:
    /// of a night of two shards it kept one, and of a repaired night the repair alone.
    @Test("--last counts nights: a plain run or a split's shards, with the runs after them")
    func lastSkipsLogOnlyReplays() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "window-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func log(_ name: String, _ extra: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            let start = #"{"event":"run.start","ts":"2026-03-01T10:00:00.000Z","#
            let line = start + #""run":"\#(name.prefix(8))","job":"j"\#(extra)}"# + "\n"
            try line.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let night = try log("a-night.jsonl", "")
        let resume = try log("b-resume.jsonl", #","resumedFrom":["a-night.jsonl"]"#)
        let replay = try log("c-replay.jsonl", #","replayOf":["a"],"replayFrom":"log""#)
        let shard0 = try log("d-shard0.jsonl", #","shard":{"index":0,"count":2}"#)
        let shard1 = try log("e-shard1.jsonl", #","shard":{"index":1,"count":2}"#)
        let next0 = try log("f-shard0.jsonl", #","shard":{"index":0,"count":2}"#)
        let logs = [night, resume, replay]
        #expect(ReportWindow.select(logs, last: 1, since: nil) == logs)
        #expect(ReportWindow.select([night, replay], last: 1, since: nil) == [night, replay])
        let split = logs + [shard0, shard1]
        #expect(ReportWindow.select(split, last: 1, since: nil) == [shard0, shard1])
        #expect(ReportWindow.select(split, last: 2, since: nil) == split)
        #expect(ReportWindow.select(split + [next0], last: 1, since: nil) == [next0])
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

    /// What went on from a killed run: a resume that read its log, a replay of its requests;
    /// not a replay of another run, nor a resume whose history began after it (a trial's
    /// report credited a replay of an earlier night with the killed run).
    @Test("a killed run's continuation is a resume that read it or a replay of it, no other")
    func continuationOfAKilledRun() {
        var table = RunTable()
        func start(_ run: String, second: Int, replayOf: [String] = [], resumed: [String] = []) {
            let text =
                #"{"event":"run.start","ts":"2026-11-20T02:00:0\#(second).000Z","run":"\#(run)","job":"j"}"#
            var line = LogLine(bytes: Array(text.utf8)[...])!
            line.runFields = LogLine.RunFields()
            line.replayOf = replayOf
            line.resumedFrom = resumed
            table.add(line, file: "logs/j/\(run).jsonl")
        }
        start("night1", second: 1)
        start("killed", second: 2)
        start("replay1", second: 3, replayOf: ["night1"])
        start("resume0", second: 4, resumed: ["/srv/logs/j/night1.jsonl"])
        let killed = table.rows[1]
        #expect(table.continuation(of: killed) == nil)
        start("replay2", second: 5, replayOf: ["killed"])
        #expect(table.continuation(of: killed)?.run == "replay2")
        start("resume", second: 6, resumed: ["/srv/logs/j/killed.jsonl"])
        #expect(table.continuation(of: table.rows[0])?.run == "replay1")
        #expect(table.continuation(of: table.rows[2]) == nil)
    }

    /// A night cut by its deadline, then a plain night that fetched everything: the cut run
    /// is behind the job's current history, and the job is complete (a trial's report named
    /// it as unfinished for ever after, a resume notwithstanding).
    @Test("a cut run before the latest plain run leaves the job complete")
    func cutRunBehindTheHistory() {
        var report = RunReport(job: "j")
        func add(_ event: String, run: String, current: Bool, _ fields: LogLine.RunFields? = nil) {
            let text =
                #"{"event":"\#(event)","ts":"2026-11-20T02:00:00.000Z","run":"\#(run)","job":"j"}"#
            var line = LogLine(bytes: Array(text.utf8)[...])!
            line.runFields = fields ?? LogLine.RunFields()
            report.add(line, file: "logs/j/\(run).jsonl", current: current)
        }
        var cut = LogLine.RunFields()
        (cut.interrupted, cut.tasksUnlisted, cut.total, cut.ok, cut.failed) = (true, true, 3, 3, 0)
        add("run.start", run: "cut", current: false)
        add("run.end", run: "cut", current: false, cut)
        #expect(ReportText.Repair(report).killed.isEmpty)
        var whole = LogLine.RunFields()
        (whole.total, whole.ok, whole.failed) = (5, 5, 0)
        add("run.start", run: "night", current: true)
        add("run.end", run: "night", current: true, whole)
        #expect(ReportText.Repair(report).killed.isEmpty)
        #expect(report.runTable.unfinished.map(\.run) == ["cut"], "still told in its row")
        // The same cut run in the current history is unfinished.
        var again = RunReport(job: "j")
        swap(&report, &again)
        add("run.start", run: "cut", current: true)
        add("run.end", run: "cut", current: true, cut)
        #expect(ReportText.Repair(report).killed == ["cut"])
    }

    static func line(_ event: String, fields: LogLine.RunFields? = nil) -> LogLine {
        let text =
            #"{"event":"\#(event)","ts":"2026-11-20T02:00:00.000Z","run":"r1","job":"j"}"#
        var line = LogLine(bytes: Array(text.utf8)[...])!
        line.runFields = fields
        return line
    }
}
