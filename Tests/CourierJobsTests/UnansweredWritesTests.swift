@testable import CourierJobs
import Testing

/// A write's `request.start` with no `request` line after it in its run: sent while the run
/// was cut, its answer unknown. The report counts them apart from the requests.
@Suite("Report: unanswered writes")
struct UnansweredWritesTests {
    static func line(_ event: String, run: String, task: String) -> LogLine {
        LogLine.made(event, run: run, task: task, outcome: event == LogEvent.request ? "ok" : nil)
    }

    @Test("a start with no request line in its run counts; one answered, or a read, does not")
    func counted() {
        var report = RunReport(job: "j")
        for (event, run, task) in [
            (LogEvent.requestStart, "r1", "w1"), (LogEvent.request, "r1", "w1"),
            (LogEvent.requestStart, "r1", "w2"),  // cut: no request line in r1
            (LogEvent.request, "r1", "read"),
            (LogEvent.requestStart, "r2", "w2"), (LogEvent.request, "r2", "w2"),
            (LogEvent.requestStart, "r2", "w3"), (LogEvent.requestStart, "r2", "w3"),
            (LogEvent.request, "r2", "w3"),  // its retry's start has no answer
        ] {
            report.add(Self.line(event, run: run, task: task))
        }
        #expect(report.unansweredWrites == 2)
        #expect(report.requests == 4)
    }
}
