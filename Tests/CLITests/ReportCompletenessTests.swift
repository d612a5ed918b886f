import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier report` tells the truth about completeness, on logs of real runs: a task counts
/// once however many runs sent it, and a run that never wrote `run.end` is shown as killed.
@Suite("courier report: completeness")
struct ReportCompletenessTests {
    /// The report of `paths` as JSON: its one job.
    static func jsonReport(_ paths: [String]) async throws -> [String: Any] {
        let result = try await CourierBinary.run(["report", "--json"] + paths)
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require((root["jobs"] as? [[String: Any]])?.first)
    }

    @Test(
        "three conditional runs and a replay of five tasks: each task counts once",
        arguments: RunCommandTests.backends)
    func mergedRunsCountEachTaskOnce(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("merged")
        try ConditionalTests.writeJob(space, key: key, version: "m")
        for _ in 0..<3 {
            let run = try await space.run(backend: backend)
            #expect(run.status == 0, "\(run.stderr)")
        }
        // The first run's requests (a replay of a 304 is not conditional, so it would fail).
        let first = try #require(try ReplayTests.logFiles(space).first)
        let replay = try await CourierBinary.run(
            [
                "replay", first, "--all", "--job", "job.json", "--log-dir", space.logs.path,
                "--backend", backend, "--no-progress",
            ], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout) \(replay.stderr)")

        let job = try await Self.jsonReport([space.logs.appendingPathComponent("e2e").path])
        let tasks = try #require(job["tasks"] as? [String: Int])
        #expect(tasks["total"] == 5 && tasks["ok"] == 5, "\(tasks)")
        #expect((tasks["notModified"] ?? 99) <= (tasks["ok"] ?? 0), "\(tasks)")
        let attempts = try #require(job["attemptsPerTask"] as? [String: Int])
        #expect(attempts.values.reduce(0, +) == 5, "one final attempt per task: \(attempts)")
        #expect(job["requests"] as? Int == 20, "requests count every attempt")

        // One row per run, in run order, with its kind and the counts of its run.end.
        let runs = try #require(job["runTable"] as? [[String: Any]])
        #expect(runs.map { $0["kind"] as? String } == ["run", "run", "run", "replay"])
        #expect(runs.allSatisfy { $0["state"] as? String == "finished" }, "\(runs)")
        #expect(runs.map { $0["plannedTasks"] as? Int } == [5, 5, 5, 5])
        #expect(runs.map { ($0["tasks"] as? [String: Int])?["ok"] } == [5, 5, 5, 5])

        let text = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e").path])
        #expect(text.stdout.contains("tasks     5 total, 5 ok, 0 failed"), "\(text.stdout)")
        #expect(!text.stdout.contains("killed"), "\(text.stdout)")
    }

    @Test("after a replay of logs alone, the repair line names the job file, not \"-\"")
    func repairLineAfterALogOnlyReplay() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "bad", "path": "/status/500"}"#, extra: #""retry": {"maxAttempts": 1},"#
        )
        #expect(try await space.run(backend: "curl").status == 1)
        let logs = try ReplayTests.logFiles(space)
        let replay = try await CourierBinary.run(
            ["replay"] + logs + ["--log-dir", space.logs.path], directory: space.folder)
        #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        let jobPath = space.folder.appendingPathComponent("job.json").standardizedFileURL.path
        #expect(
            report.stdout.contains("courier run \(jobPath) --resume"), "\(report.stdout)")
        // How to see the failed task's attempts, with its names filled in (trial S: `courier
        // show LOG TASK`), and it does show them.
        let show = "courier show \(jobPath) bad shows a task's attempts"
        #expect(report.stdout.contains(show), "\(report.stdout)")
        let shown = try await CourierBinary.run(["show", jobPath, "bad"])
        #expect(shown.status == 0, "\(shown.stdout)\(shown.stderr)")
        #expect(shown.stdout.contains("500"), "\(shown.stdout)")
    }

    @Test("a run killed with SIGKILL is reported as killed, with how many tasks it recorded")
    func killedRunIsShownUnfinished() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("killed")
        // s1…s20 answer at once, s21…s40 hang: the kill lands with exactly twenty recorded.
        try ResumeTests.writeJob(space, key: key, hanging: true)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 3, key: "\(key)-slow", server: space.server,
            delay: 0.5)
        _ = await running.wait(seconds: 300)
        let logs = try ReplayTests.logFiles(space)
        let html = space.folder.appendingPathComponent("report.html")

        let text = try await CourierBinary.run(["report", "--html", html.path] + logs)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("killed: 20 of 40 tasks recorded"), "\(text.stdout)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("killed: 20 of 40 tasks recorded"))

        let job = try await Self.jsonReport(logs)
        let run = try #require((job["runTable"] as? [[String: Any]])?.first)
        #expect(run["state"] as? String == "killed", "\(run)")
        #expect(run["recordedTasks"] as? Int == 20)
        #expect(run["plannedTasks"] as? Int == 40)
        #expect(run["tasks"] == nil, "no run.end, no counts of its own")
        // The job's verdict says it is not done, and how to repair it.
        #expect(job["complete"] as? Bool == false, "\(job)")
        #expect(job["notDone"] as? Int == 0, "no task ended badly; twenty never ended")
        #expect(job["unfinishedRuns"] as? [String] == [run["run"] as? String ?? "?"])
        #expect((job["next"] as? String)?.hasSuffix("job.json --resume") == true, "\(job)")
        // Nothing went on from it yet: the report says what to run, with the job file's
        // absolute path (the run was given `job.json`).
        let jobPath = space.folder.appendingPathComponent("job.json").standardizedFileURL.path
        #expect(
            text.stdout.contains(
                "next      a run was killed before its end: courier run \(jobPath) --resume"),
            "\(text.stdout)")

        // After the resume, the killed run's banner says what went on from it, and the
        // report of the last night is the night with its resume: complete.
        // The same tasks, the hanging ones now answering at once.
        try ResumeTests.writeJob(space, key: key, hanging: false)
        let resume = try await CourierBinary.run(
            ["run", "job.json", "--resume", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(resume.status == 0, "\(resume.stdout)\(resume.stderr)")
        let after = try await CourierBinary.run(["report"] + (try ReplayTests.logFiles(space)))
        #expect(after.stdout.contains("went on from it"), "\(after.stdout)")
        let last = try await CourierBinary.run(
            ["report", "--last", "1", space.logs.appendingPathComponent("e2e").path])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(last.stdout.contains("2 runs ("), "\(last.stdout)")
        #expect(last.stdout.contains("went on from it"), "\(last.stdout)")
        #expect(!last.stdout.contains("next "), "\(last.stdout)")
        let repaired = try await Self.jsonReport(try ReplayTests.logFiles(space))
        #expect(repaired["complete"] as? Bool == true, "\(repaired)")
        #expect(repaired["next"] == nil && repaired["notDone"] == nil)
        // The job file stands for its logs.
        let byJob = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(byJob.status == 0, "\(byJob.stderr)")
        #expect(byJob.stdout.contains("2 runs ("), "\(byJob.stdout)")
        let none = try await CourierBinary.run(
            ["report", "--since", "2099-01-01", space.logs.appendingPathComponent("e2e").path])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no run in the logs given starts in that window"))
        let bad = try await CourierBinary.run(["report", "--since", "yesterday", "x.jsonl"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--since expects"), "\(bad.stderr)")
    }
}
