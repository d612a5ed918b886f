@testable import CourierJobs
import Testing

/// The order a run ends in is one list (``JobRunner/finishOrder``); these are the rules it
/// keeps, each a reason a step must come after another.
@Suite("Finish order")
struct FinishOrderTests {
    typealias Step = JobRunner.FinishStep

    static func place(_ step: Step) -> Int {
        JobRunner.finishOrder.firstIndex(of: step) ?? -1
    }

    @Test func everyStepOnce() {
        #expect(JobRunner.finishOrder.count == Step.allCases.count)
        #expect(Set(JobRunner.finishOrder).count == Step.allCases.count)
    }

    @Test(
        "each step after the steps it depends on",
        arguments: [
            // The tasks' lines are on file before anything that follows from them.
            (Step.linesOnFile, Step.conditionalState), (.linesOnFile, .records),
            (.linesOnFile, .cursors),
            // A records task's cursor moves only once its records are in the file.
            (.records, .cursors),
            // Pruning and the summary read the final counts.
            (.unbuiltSelectionUncounted, .summary), (.records, .summary),
            (.summary, .endPing), (.summary, .runEnd),
            // The data checks read the counts and the moved cursors, and decide the exit
            // code the ping, run.end and the metrics carry.
            (.summary, .dataChecks), (.cursors, .dataChecks), (.dataChecks, .endPing),
            (.dataChecks, .runEnd),
            // The end ping's line is in the log, before run.end; a signal while it is sent
            // still counts.
            (.endPing, .runEnd), (.endPing, .signalWatcher),
            // The metrics file carries what run.end said (and a log that failed writing it).
            (.runEnd, .metricsFile), (.metricsTimer, .metricsFile),
            // The progress line is cleared before anything else is printed.
            (.progressLine, .records), (.progressLine, .pruning),
        ])
    func after(before: Step, after: Step) {
        #expect(Self.place(before) < Self.place(after), "\(before) before \(after)")
    }
}
