import Courier
@testable import CourierJobs
import Testing

/// What cron mails of a night's endings: the first of each reason in full, the rest counted,
/// in the words of what happened (failed, skipped, held).
@Suite("Failure reporter")
struct FailureReporterTests {
    /// A trial's 20 held writes mailed two lines and "more failures; see the log".
    @Test("held writes and skips are grouped by reason, as failures are, in their own words")
    func grouped() {
        let lines = Locked<[String]>([])
        Console.$errorLines.withValue(lines) {
            let reporter = FailureReporter(console: .plain, job: "j")
            for index in 1...20 {
                reporter.failed(
                    task: "w\(index)", reason: "its write was answered 201 by run r1", as: .held)
            }
            reporter.failed(task: "a", reason: "status 500, expected 2xx")
            reporter.failed(task: "b", reason: "status 500, expected 2xx")
            reporter.failed(task: "c", reason: "input task login did not succeed", as: .skipped)
            // A reason that names its task is one reason all the same, by its general form
            // (a trial's held writes each said "name it (--task w-N)", one line apiece).
            for index in 1...3 {
                reporter.failed(
                    task: "k-\(index)", reason: "no answer: name it (--task k-\(index))",
                    general: "no answer: name it (--task ID)", as: .held)
            }
            reporter.finish()
        }
        #expect(
            lines.withLock { $0 } == [
                "courier: j: task w1 not sent: its write was answered 201 by run r1",
                "courier: j: task a failed: status 500, expected 2xx",
                "courier: j: task c skipped: input task login did not succeed",
                "courier: j: task k-1 not sent: no answer: name it (--task k-1)",
                "courier: j: 19 more writes not sent again the same way: its write was answered 201 by run r1",
                "courier: j: 1 more task failed the same way: status 500, expected 2xx",
                "courier: j: 2 more writes not sent again the same way: no answer: name it (--task ID)",
            ])
    }
}
