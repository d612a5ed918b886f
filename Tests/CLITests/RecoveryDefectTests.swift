import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The recovery defects found by trying Courier as a new user would, each with the test that
/// failed before its fix (the matrix in ``RecoveryMatrixTests`` covers the compositions).
@Suite("recovery defects")
struct RecoveryDefectTests {
    static func jsonURL(_ json: String) -> String {
        "/json?v=" + URLEncoding.encode(json)
    }

    @Test(
        "a value captured twice fans out once: one request per child id",
        arguments: RunCommandTests.backends)
    func duplicateCapturedIDs(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("dupes")
        let source = Self.jsonURL(#"{"ids": ["a", "a", "b", "a"]}"#)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "url": "\#(space.server.baseURL.absoluteString)\#(source)", "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "post-{id}", "method": "POST", "path": "/echo", "query": {"key": "\#(key)", "id": "{id}"},
                 "json": {"id": "{id}"}, "foreach": {"id": {"capture": "ids"}}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 2, "a and b, once each: \(hits.map(\.path))")
        let posts = try space.logLines().filter { $0["event"] as? String == "request" }
            .compactMap { $0["task"] as? String }.filter { $0.hasPrefix("post-") }
        #expect(posts.sorted() == ["post-a", "post-b"])
        #expect(result.stdout.contains("3 tasks, 3 ok"), "\(result.stdout)")
    }

    @Test("a child that cannot be built gets a task.failed line; run.end counts what the log holds")
    func expansionFailureIsLogged() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let good = space.server.url("/status/200").absoluteString
        let source = Self.jsonURL(#"{"urls": ["\#(good)", "::not a url::"]}"#)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "url": "\#(space.server.baseURL.absoluteString)\#(source)", "capture": {"urls": {"json": "/urls/*"}}},
                {"id": "get-{u}", "url": "{u}", "foreach": {"u": {"capture": "urls"}}}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        let lines = try space.logLines()
        LogContract.check(lines)
        let finals = lines.filter {
            ["request", "task.skipped", "task.failed"].contains($0["event"] as? String ?? "")
                && ["ok", "failed", "skipped"].contains($0["outcome"] as? String ?? "")
        }
        let end = try #require(lines.last?["tasks"] as? [String: Int])
        #expect(finals.count == end["total"], "every task counted in run.end has a final line")
        let failed = try #require(lines.first { $0["event"] as? String == "task.failed" })
        #expect((failed["error"] as? [String: String])?["kind"] == "invalidTask")
    }

    @Test("a log deleted mid-run stops the run with exit 1 and says so")
    func vanishedLog() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("vanish")
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "300", "key": "\#(key)"}, "foreach": {"n": {"range": [1, 40]}}}"#,
            extra: #""concurrency": 1,"#)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        // From a thread of its own: a loaded test run can starve the cooperative pool for
        // longer than the whole run takes.
        let hits = space.server.url("/hits?key=\(key)")
        let logs = space.logs
        await HostileValueTests.onThread {
            let deadline = Date().addingTimeInterval(300)
            while (BlockingFetch.json(hits)?["count"] as? Int ?? 0) < 1, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            try? FileManager.default.removeItem(at: logs)
        }
        let (status, _, stderr) = await running.exit(seconds: 300)
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("was deleted"), "\(stderr)")
        let sent = try await ServerHits.of(key, on: space.server).count
        #expect(sent < 40, "the run stopped instead of sending everything: \(sent)")
    }

    /// A signal between `run.start` and the watcher's start killed the process with no
    /// `run.end` (1-6 % of early signals). Now the watcher is in place before the log exists:
    /// whenever a log was begun, it ends with `run.end`.
    @Test("a SIGTERM at any moment after start still writes run.end")
    func earlySignals() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "t{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 50]}}}"#)
        var begun = 0
        // The trials run in bash, which reaps its children itself: Foundation's Process can
        // lose a child killed within milliseconds of its start, and then waits for ever.
        // The last trial waits for its log to exist before the signal (an event, not a
        // time: on a loaded machine every timed trial can end before any log begins).
        let script = """
            for trial in $(seq 0 23); do
              "$0" run job.json --log-dir "$1" --no-progress >/dev/null 2>&1 &
              pid=$!
              sleep "$(printf '0.%03d' $((trial * 15)))"
              kill -TERM "$pid" 2>/dev/null
              wait "$pid"
            done
            before=$(ls "$1/e2e" 2>/dev/null | wc -l)
            "$0" run job.json --log-dir "$1" --no-progress >/dev/null 2>&1 &
            pid=$!
            for _ in $(seq 3000); do
              [ "$(ls "$1/e2e" 2>/dev/null | wc -l)" -gt "$before" ] && break
              sleep 0.01
            done
            kill -TERM "$pid" 2>/dev/null
            wait "$pid"
            """
        let trials = try await CourierBinary.run(
            ["-c", script, CourierBinary.url.path, space.logs.path],
            executable: URL(fileURLWithPath: "/bin/bash"), directory: space.folder)
        #expect(trials.status == 0 || trials.status == 143, "\(trials.stderr)")
        let folder = space.logs.appendingPathComponent("e2e")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            begun += 1
            let last = text.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains(#""event":"run.end""#), "\(name) has no run.end: \(last)")
        }
        #expect(begun > 0, "the last trial, at least, began a log")
    }

    /// A task the logs name that the job no longer builds is refused with that reason, and
    /// the replay exits 1: never "ok" without doing what the job says.
    @Test("replay --job refuses a task the job no longer builds, exit 1")
    func replayOfATaskNoLongerInTheJob() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "gone-{n}", "path": "/status/503", "foreach": {"n": [1, 2]}}"#,
            extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        // The job changes: gone-2 is no longer one of its tasks.
        try space.writeJob(
            tasks: #"{"id": "gone-{n}", "path": "/status/200", "foreach": {"n": [1]}}"#)
        let replay = try await CourierBinary.run(
            [
                "replay", space.logs.appendingPathComponent("e2e").path, "--job", "job.json",
                "--log-dir", space.logs.path, "--no-progress",
            ], directory: space.folder)
        #expect(replay.status == 1, "\(replay.stdout) \(replay.stderr)")
        #expect(replay.stderr.contains("task gone-2: the job no longer builds this task"))
        #expect(replay.stdout.contains("1 task, 1 ok"), "\(replay.stdout)")
        #expect(replay.stdout.contains("1 refused"), "\(replay.stdout)")
    }

    /// A task removed from the job (or renamed) kept the history "1 task not done" for ever:
    /// the repair it named never sent it, as the job no longer builds it (trial L).
    @Test("a failed task the job no longer builds is not left 'not done' after a whole resume")
    func removedTaskLeavesTheHistory() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "ok1", "path": "/echo"},
                {"id": "gone", "path": "/status/404"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        try space.writeJob(
            tasks: #"{"id": "ok1", "path": "/echo"}"#, extra: #""retry": {"maxAttempts": 1},"#)
        for _ in 0..<2 {
            let resumed = try await space.run(["--resume"], backend: "curl")
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(
                resumed.stdout.contains("the job's history: every task done"),
                "\(resumed.stdout)")
        }
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e").path], directory: space.folder)
        #expect(!report.stdout.contains("not done"), "\(report.stdout)")
        #expect(report.stdout.contains("0 failed"), "\(report.stdout)")
        // Every later command reads the history the same way (trial M: `replay --job` refused
        // the gone task and exited 1 every time, and a `--task` run counted it again).
        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(!replay.stderr.contains("no longer builds"), "\(replay.stderr)")
        let chosen = try await space.run(["--task", "ok1"], backend: "curl")
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(!chosen.stdout.contains("not done"), "\(chosen.stdout)")
        // A task that fails again in the resume still counts.
        try space.writeJob(
            tasks: #"""
                {"id": "ok1", "path": "/echo"},
                {"id": "bad", "path": "/status/500"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let failing = try await space.run(["--resume"], backend: "curl")
        #expect(failing.status == 1)
        #expect(failing.stdout.contains("1 task not done"), "\(failing.stdout)")
    }
}
