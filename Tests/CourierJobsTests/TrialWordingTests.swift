@testable import CourierJobs
import Foundation
import Testing

/// Words a trial read wrong, held to what they say now.
@Suite("Trial wording")
struct TrialWordingTests {
    /// A run's `run.end` with its task counts and exit status.
    static func runEnd(_ run: String, total: Int, ok: Int, failed: Int, exitCode: Int) -> LogLine {
        var end = LogLine.made(LogEvent.runEnd, run: run)
        var fields = LogLine.RunFields()
        (fields.total, fields.ok, fields.failed, fields.exitCode) = (total, ok, failed, exitCode)
        end.runFields = fields
        return end
    }

    /// `"timeout": 1e400` read "expected seconds greater than 0, found 1e400"; a foreach
    /// source's error left out the list form.
    @Test("a number over its bound says the bound; foreach names every form")
    func decoderWords() {
        func errors(_ json: String) -> [String] {
            do {
                _ = try ExpansionTests.load(json)
                return []
            } catch let error as JobFileErrors {
                return error.errors.map { "\($0)" }
            } catch {
                return ["\(error)"]
            }
        }
        let big = errors(
            ExpansionTests.job(tasks: #"{"id": "a", "path": "/"}"#, extra: #""timeout": 1e400,"#))
        #expect(
            big.contains { $0.contains("greater than 0, at most 86400, found 1e400") }, "\(big)")
        let foreach = errors(
            ExpansionTests.job(
                tasks: #"{"id": "a{n}", "path": "/{n}", "foreach": {"n": {"list": [1]}}}"#))
        #expect(
            foreach.contains {
                $0.contains("a list of values is the variable's array itself")
                    && $0.contains(#"{"range": [from, to]}"#)
            }, "\(foreach)")
    }

    /// A single request read "1000 req/s over 0.00 s"; the runs table counted skipped tasks
    /// as failed where the tasks line did not.
    @Test("no rate for one request; the runs table counts skips apart")
    func reportWords() {
        var report = RunReport(job: "j")
        var start = LogLine.made(LogEvent.runStart, run: "r1")
        start.runFields = LogLine.RunFields()
        report.add(start)
        report.add(LogLine.made(LogEvent.request, run: "r1", task: "a", outcome: "failed"))
        report.add(LogLine.made(LogEvent.skipped, run: "r1", task: "b", outcome: "skipped"))
        report.add(Self.runEnd("r1", total: 2, ok: 0, failed: 2, exitCode: 1))
        report.finish()
        let text = ReportText.render(report)
        #expect(text.contains("requests  1 (0 retries)\n"), "\(text)")
        #expect(!text.contains("req/s"), "\(text)")
        #expect(text.contains("2 total, 0 ok, 1 failed, 1 skipped (exit 1)"), "\(text)")
    }

    /// A trial's report said complete for a job only `--task` runs had touched.
    @Test("a report of --task runs alone is not complete; a plain run makes it so")
    func noWholeRun() {
        func report(plain: Bool) -> RunReport {
            var report = RunReport(job: "j")
            var start = LogLine.made(LogEvent.runStart, run: "t1")
            start.replayFrom = "job"
            start.runFields = LogLine.RunFields()
            var lines = [start]
            if plain {
                var first = LogLine.made(LogEvent.runStart, run: "p1")
                first.runFields = LogLine.RunFields()
                first.time = start.time - 10
                lines.insert(first, at: 0)
            }
            for line in lines { report.add(line) }
            report.add(LogLine.made(LogEvent.request, run: "t1", task: "a", outcome: "ok"))
            report.add(Self.runEnd("t1", total: 1, ok: 1, failed: 0, exitCode: 0))
            report.finish()
            return report
        }
        let tasksOnly = report(plain: false)
        #expect(!ReportText.Repair(tasksOnly).complete)
        #expect(ReportText.nextStep(tasksOnly)?.contains("no whole run of the job yet") == true)
        #expect(ReportText.lacksWholeRun(report(plain: true).runTable.rows) == false)
    }
}
