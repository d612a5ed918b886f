@testable import CourierJobs
import Foundation
import Testing

/// Words a trial read wrong, held to what they say now.
@Suite("Trial wording")
struct TrialWordingTests {
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
        #expect(foreach.contains { $0.contains("expected a list of values") }, "\(foreach)")
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
        var end = LogLine.made(LogEvent.runEnd, run: "r1")
        var fields = LogLine.RunFields()
        (fields.total, fields.ok, fields.failed, fields.exitCode) = (2, 0, 2, 1)
        end.runFields = fields
        report.add(end)
        report.finish()
        let text = ReportText.render(report)
        #expect(text.contains("requests  1 (0 retries)\n"), "\(text)")
        #expect(!text.contains("req/s"), "\(text)")
        #expect(text.contains("2 total, 0 ok, 1 failed, 1 skipped (exit 1)"), "\(text)")
    }
}
