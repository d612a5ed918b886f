import CourierTestSupport
import Foundation
import Testing

/// A whole-run deadline (`--deadline`, the job's `"deadline"`) stops the run as SIGTERM does:
/// no new task starts, those in flight finish within the grace period, `run.end` says
/// `interrupted` and why, and the exit status is SIGTERM's (143).
@Suite("run deadline")
struct DeadlineTests {
    /// 40 one-second tasks, two at a time: at least 20 s of work, stopped after 2 s.
    static let slowTasks =
        #"{"id": "s{n}", "path": "/slow", "query": {"ms": "1000"}, "foreach": {"n": {"range": [1, 40]}}}"#

    static func checkStoppedByDeadline(
        _ result: CourierBinary.Result, space: JobWorkspace
    ) throws {
        #expect(result.status == 143, "as a SIGTERM'd run: \(result.stderr)")
        #expect(result.stderr.contains("the deadline (2s) was reached"), "\(result.stderr)")
        let lines = try space.logLines()
        LogContract.check(lines)
        let end = try #require(lines.last)
        #expect(end["interrupted"] as? Bool == true)
        #expect(end["stoppedBy"] as? String == "deadline")
        #expect(end["exitCode"] as? Int == 143)
        let requests = lines.filter { $0["event"] as? String == "request" }
        #expect(requests.count >= 1 && requests.count < 40, "scheduling stopped")
        #expect(
            requests.allSatisfy { $0["outcome"] as? String == "ok" },
            "the tasks in flight finished within the grace period")
    }

    @Test func theDeadlineOptionStopsTheRunAsSIGTERMDoes() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: Self.slowTasks, extra: #""concurrency": 2,"#)
        let started = Date()
        // An hour's grace: the tasks in flight finish however slow the machine is.
        let result = try await space.run(["--deadline", "2s", "--grace", "1h"], backend: "curl")
        // No time bound (a loaded machine stretches any): the log says why it stopped.
        _ = started
        try Self.checkStoppedByDeadline(result, space: space)
        #expect(result.stdout.contains("stopped at its deadline (2s)"), "\(result.stdout)")
        // The tasks that never started are counted in the line, not left to --json.
        #expect(result.stdout.contains(" not run, stopped at its deadline"), "\(result.stdout)")
    }

    /// `--quiet` is silent only when every task succeeded: a run cut by its deadline says so,
    /// and cron mails it.
    @Test func quietStillSaysTheDeadlineCutTheRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: Self.slowTasks, extra: #""concurrency": 2,"#)
        let result = try await space.run(
            ["--quiet", "--deadline", "2s", "--grace", "1h"], backend: "curl")
        #expect(result.status == 143, "as a SIGTERM'd run: \(result.stderr)")
        // The note as it happens is progress, which --quiet leaves out; the summary is not.
        #expect(result.stdout.contains("stopped at its deadline (2s)"), "\(result.stdout)")
        #expect(try space.logLines().last?["stoppedBy"] as? String == "deadline")
    }

    @Test func theJobsDeadlineKeyDoesTheSameAndJSONSaysSo() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: Self.slowTasks, extra: #""concurrency": 2, "deadline": 2,"#)
        // An hour's grace: the tasks in flight finish however loaded the machine is.
        let result = try await space.run(["--json", "--grace", "1h"], backend: "curl")
        try Self.checkStoppedByDeadline(result, space: space)
        let summary = try #require(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any],
            "\(result.stdout)")
        #expect(summary["stoppedBy"] as? String == "deadline")
        #expect(summary["interrupted"] as? Bool == true)
        #expect(summary["exitCode"] as? Int == 143)
        #expect(((summary["tasks"] as? [String: Int])?["notRun"] ?? 0) > 0)
    }

    /// A run stopped before some tasks started writes no line for them: neither a resume's
    /// summary nor the report may take the history for complete (a new user's trial found
    /// "the job's history: every task done" and `"complete": true` after a resume cut so).
    @Test func aRunCutByItsDeadlineLeavesTheHistoryNotDone() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: Self.slowTasks, extra: #""concurrency": 2,"#)
        // An hour's grace: the tasks in flight finish, so every line on file is `ok`.
        let first = try await space.run(["--deadline", "2s", "--grace", "1h"], backend: "curl")
        try Self.checkStoppedByDeadline(first, space: space)
        let afterFirst = try await ReportCompletenessTests.jsonReport(
            try ReplayTests.logFiles(space))
        #expect(afterFirst["complete"] as? Bool == false, "\(afterFirst)")
        #expect((afterFirst["next"] as? String)?.contains("--resume") == true)

        let resumed = try await space.run(
            ["--resume", "--deadline", "2s", "--grace", "1h"], backend: "curl")
        #expect(resumed.status == 143, "\(resumed.stderr)")
        #expect(!resumed.stdout.contains("every task done"), "\(resumed.stdout)")
        #expect(resumed.stdout.contains(" not done ("), "\(resumed.stdout)")
        let afterResume = try await ReportCompletenessTests.jsonReport(
            try ReplayTests.logFiles(space))
        #expect(afterResume["complete"] as? Bool == false, "\(afterResume)")
    }

    @Test(
        "a deadline that cut nothing: every task had started and ended in the grace period, exit 0")
    func aDeadlineThatCutNothing() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("uncut")
        let gate = FixtureServer.uniqueKey("gate")
        // Both tasks are in flight, held by the gate, when the deadline comes; they end once
        // the test opens the gate, well inside an hour's grace.
        try space.writeJob(
            tasks:
                #"{"id": "g{n}", "path": "/gate", "query": {"name": "\#(gate)", "max": "300", "key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 2]}}, "timeout": 600}"#,
            extra: #""concurrency": 2,"#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--deadline",
                "20s", "--grace", "1h",
            ], directory: space.folder)
        for _ in 0..<2_400 where try await ServerHits.of(key, on: space.server).count < 2 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "both in flight")
        try await running.waitForStandardError(
            containing: "the deadline (20s) was reached", seconds: 300)
        _ = try await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)"))
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 0, "nothing was cut: \(output)")
        let end = try #require(try space.logLines().last)
        #expect(end["interrupted"] as? Bool == false)
        #expect(end["exitCode"] as? Int == 0)
    }

    @Test func aDeadlineNotReachedChangesNothing() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "one", "path": "/status/200"}"#, extra: #""deadline": 600,"#)
        let result = try await space.run(["--deadline", "1h30m"], backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        let end = try #require(try space.logLines().last)
        #expect(end["interrupted"] as? Bool == false)
        #expect(end["stoppedBy"] == nil)
    }

    @Test(arguments: ["0", "-5s", "2x", "soon", "1h-"])
    func aBadDurationIsAUsageError(text: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "one", "path": "/status/200"}"#)
        let result = try await space.run(["--deadline=\(text)"], backend: "curl")
        #expect(result.status == 2)
        #expect(result.stderr.contains("--deadline expects a duration"), "\(result.stderr)")
    }

    @Test func aBadDeadlineKeyIsRefused() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "one", "path": "/status/200"}"#, extra: #""deadline": 0,"#)
        let result = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("deadline: expected seconds greater than 0"), "\(result.stderr)")
    }

    /// A deadline that comes while a listing's children are under way, before the fan-out has
    /// handed out the rest: the run is a cut one (exit 143, the repair named), and the records
    /// file the children write is held back, as after a signal. (A trial's run exited 0, said
    /// not interrupted, and wrote a records file with half the items new and the rest missing.)
    @Test("a deadline before a fan-out listed its tasks cuts the run and holds its records")
    func deadlineBeforeTheFanOutListed() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("deadline-fan")
        let gate = FixtureServer.uniqueKey("deadline-gate")
        try await SinceCursorTests.put(
            (1...4).map { SinceCursorTests.record($0, "0\($0)", name: "n\($0)") }, key: key,
            on: space)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/store/items", "query": {"key": "\#(key)", "size": "10"},
                 "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/slow", "query": {"key": "\#(key)", "id": "{id}", "ms": "0", "hold_until": "\#(gate)"},
                 "foreach": {"id": {"capture": "ids"}}, "timeout": 900,
                 "records": {"from": "", "to": "records/items.jsonl", "write": "merge", "key": "/slept"}}
                """#, extra: #""concurrency": 2,"#)
        // The held children wait for the gate, not a clock (no 30 s timeout on a slow machine).
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--grace", "1h",
                "--deadline", "1s",
            ], directory: space.folder)
        // The two children the server holds keep the run going past its deadline.
        try await running.waitForStandardError(containing: "was reached", seconds: 120)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)"))
        let (status, output) = await running.wait(seconds: 120)
        #expect(status == 143, "\(output)")
        #expect(output.contains("more tasks not started (those fed by captures)"), "\(output)")
        #expect(output.contains("to repair: courier run"), "\(output)")
        let records = space.folder.appendingPathComponent("out/records/items.jsonl")
        #expect(!FileManager.default.fileExists(atPath: records.path), "\(output)")
        #expect(try space.logLines().last?["tasksUnlisted"] as? Bool == true)
    }
}
