@testable import CourierJobs
import Testing

/// A write's `request.start` with no `request` line after it in its run: sent while the run
/// was cut, its answer unknown. The report counts them apart from the requests.
@Suite("Report: unanswered writes")
struct UnansweredWritesTests {
    static func line(_ event: String, run: String, task: String) -> LogLine {
        var line = LogLine.made(
            event, run: run, task: task, outcome: event == LogEvent.request ? "ok" : nil)
        line.method = task == "read" ? "GET" : "POST"
        return line
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
        // The history learns of the writes from the same lines: w2, sent in r1 with no answer
        // there, was answered in r2 (a trial's report said heldWrites 0 where a resume held
        // two: the start lines had stopped reaching it).
        let r1Only = RunReport(job: "j")
        var cut = r1Only
        cut.add(Self.line(LogEvent.requestStart, run: "r1", task: "w2"))
        #expect(cut.history.writes[FNV1a.taskKey(job: "j", task: "w2")] == .unknown(run: "r1"))
    }

    /// A write a killed run left under way has only its `request.start`: the repair holds it
    /// when it carried no key (its outcome is unknown), and the report's `heldWrites` says so
    /// (a trial's report said 0 where the resume then held it). A keyed one is sent again.
    @Test("a write cut under way without its key is held by the repair, and counted so")
    func cutWritesAreHeld() {
        var report = RunReport(job: "j")
        var keyed = Self.line(LogEvent.requestStart, run: "r1", task: "w2")
        keyed.idempotencyKey = "k2"
        for line in [
            Self.line(LogEvent.requestStart, run: "r1", task: "w1"),
            Self.line(LogEvent.request, run: "r1", task: "w1"),
            Self.line(LogEvent.requestStart, run: "r1", task: "w3"), keyed,
        ] {
            report.add(line)
        }
        #expect(WriteRule.heldOnRepair(report.history) == 1)
        #expect(ReportText.Repair(report).heldWrites == 1)
    }

    /// A write a repair held back is a failed task in the report, as the run counted it
    /// (exit 1), not a skipped one (trial R: "1 failed" said the run, "1 skipped" the report).
    @Test("a held write is a failed task, a task skipped for a capture a skipped one")
    func heldWritesAreFailedTasks() {
        var report = RunReport(job: "j")
        report.add(LogLine.made(LogEvent.runStart, run: "r1"))
        var held = LogLine.made(LogEvent.skipped, run: "r1", task: "charge", outcome: "skipped")
        held.errorKind = LogErrorKind.writeHeld
        var skipped = LogLine.made(LogEvent.skipped, run: "r1", task: "item", outcome: "skipped")
        skipped.errorKind = "skipped"
        report.add(held)
        report.add(skipped)
        report.finish()
        #expect(report.outcomes.failed == 1 && report.outcomes.skipped == 1)
        #expect(report.outcomes.notOK.map(\.outcome) == ["failed", "skipped"])
        // The runs table too (trial T: its row said "1 skipped" where run.end said failed).
        #expect(report.runTable.rows.map(\.skippedTasks) == [1])
    }
}

/// Lines of attempts that never went out: the report counts no request for them, and its
/// OTLP export draws no span (trial P: "requests 5" where 1 was sent, and a retry's line and
/// its cancellation as two spans with one id).
@Suite("Report: attempts that never went out")
struct NeverSentAttemptsTests {
    static func line(_ task: String, kind: String?, message: String?, outcome: String) -> LogLine {
        var line = LogLine.made(LogEvent.request, run: "r1", task: task, outcome: outcome)
        line.method = "GET"
        line.errorKind = kind
        line.errorMessage = message
        return line
    }

    static let lines = [
        line("a", kind: nil, message: nil, outcome: "retry"),
        line(
            "a", kind: "cancelled", message: "cancelled while waiting to retry", outcome: "failed"),
        line(
            "b", kind: "cancelled", message: "cancelled while waiting for the host",
            outcome: "failed"),
        line(
            "c", kind: "cancelled", message: "cancelled while waiting for the rate limit",
            outcome: "failed"),
        line("d", kind: "throttled", message: "not sent", outcome: "failed"),
        line("e", kind: "cancelled", message: "the run stopped", outcome: "failed"),
    ]

    @Test func theReportCountsOnlyTheAttemptsThatWentOut() {
        var report = RunReport(job: "j")
        for line in Self.lines { report.add(line) }
        #expect(report.requests == 2, "a's retry and e, cancelled in flight")
        #expect(Self.lines.map(\.wentOut) == [true, false, false, false, false, true])
        var traces = OTLPTraces()
        for line in Self.lines { traces.add(line) }
        #expect(traces.attemptSpans == 2)
    }

    /// What those attempts waited at their gate was spent all the same, and a retry whose
    /// wait a stop cut was never made (trial R: `throttled` 0 where a write had waited 2.5 s
    /// for its host, `retries 1` where none was sent, and the write among the slowest tasks).
    @Test func theirWaitsCountAndACutRetryIsNoRetry() {
        var lines = Self.lines
        lines[0].totalMs = 40
        lines[2].throttledMs = 2500
        lines[2].blockedMs = 2500
        lines[3].blockedMs = 700
        var report = RunReport(job: "j")
        for line in lines { report.add(line) }
        report.finish()
        #expect(report.retries == 0, "a's retry was cut")
        #expect(report.throttledRequests == 1 && report.throttledMs == 2500)
        #expect(report.blockedRequests == 2 && report.blockedMs == 3200)
        let slowest = report.outcomes.slowest.map(\.task)
        #expect(slowest.contains("a") && slowest.contains("e"), "\(slowest)")
        #expect(!slowest.contains("b") && !slowest.contains("c") && !slowest.contains("d"))
    }

    /// A killed run's unreached tasks have no line: the count of tasks not done is of the
    /// lines, and the next step says the rest are besides it (trial JJ: "2 tasks not done"
    /// where 21 windows were).
    @Test("a killed run's next step says its unreached tasks are besides the count")
    func killedRunsUnreachedTasks() {
        var report = RunReport(job: "j")
        report.add(LogLine.made(LogEvent.runStart, run: "r1", task: nil, outcome: nil))
        var failed = LogLine.made(LogEvent.request, run: "r1", task: "a", outcome: "failed")
        failed.method = "GET"
        report.add(failed)
        report.finish()
        let next = ReportText.nextStep(report) ?? ""
        #expect(
            next.contains("1 task not done, besides those a killed run never reached"), "\(next)")
    }
}
