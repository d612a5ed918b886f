import CourierTestSupport
import Foundation
import Testing

/// `courier replay` end to end against the fixture server.
@Suite("courier replay")
struct ReplayTests {
    static let token = "tok-\(UUID().uuidString)"

    /// A job of two tasks behind a switched-off toggle and one that succeeds, with a bearer
    /// token from the environment; runs it once (two tasks fail).
    static func failedRun(_ space: JobWorkspace, name: String, key: String) async throws {
        try space.writeJob(
            tasks: #"""
                {"id": "t{n}", "method": "POST", "path": "/toggle", "query": {"name": "\#(name)", "key": "\#(key)", "n": "{n}"},
                 "json": {"n": "{n}", "lat": 52.520008, "s": "é \"q\""}, "foreach": {"n": [1, 2]}},
                {"id": "fine", "path": "/echo", "query": {"key": "\#(key)-fine"}}
                """#,
            extra: #""auth": {"bearer": "${env:COURIER_TEST_TOKEN}"}, "retry": {"maxAttempts": 1},"#
        )
        let first = try await space.run(
            backend: "curl", environment: ["COURIER_TEST_TOKEN": token])
        #expect(first.status == 1, "\(first.stderr)")
    }

    static func logFiles(_ space: JobWorkspace) throws -> [String] {
        let folder = space.logs.appendingPathComponent("e2e")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix(".jsonl")
        }.sorted().map { folder.appendingPathComponent($0).path }
    }

    static func switchOn(_ name: String, _ server: FixtureServer) async throws {
        _ = await ProbeClient().get(server.url("/toggle/on?name=\(name)"))
    }

    @Test(
        "only the failed tasks are re-sent, with secrets from --job",
        arguments: RunCommandTests.backends)
    func replayFailedTasks(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("replay")
        let toggle = FixtureServer.uniqueKey("toggle")
        try await Self.failedRun(space, name: toggle, key: key)
        let original = try #require(try Self.logFiles(space).first)
        let runID = try #require(try space.logLines().first?["run"] as? String)
        try await Self.switchOn(toggle, space.server)

        let replay = try await CourierBinary.run(
            [
                "replay", original, "--job", "job.json", "--log-dir", space.logs.path,
                "--backend", backend, "--no-progress",
            ],
            environment: ["COURIER_TEST_TOKEN": Self.token], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout) \(replay.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 4, "two failed, then the same two replayed")
        #expect(
            try await ServerHits.of("\(key)-fine", on: space.server).count == 1, "ok not re-sent")
        for hit in hits.suffix(2) {
            #expect(hit.header("Authorization") == "Bearer \(Self.token)")
        }
        // The POST body logged inline arrives byte-identical.
        let sent = hits.prefix(2).map(\.body).sorted()
        #expect(hits.suffix(2).map(\.body).sorted() == sent)
        #expect(sent.first?.contains("52.520008") == true)

        let files = try Self.logFiles(space)
        #expect(files.count == 2)
        let replayLog = try #require(files.first { $0 != original })
        let replayLines = try String(contentsOfFile: replayLog, encoding: .utf8).split(
            separator: "\n"
        )
        .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(replayLines.first?["replayOf"] as? [String] == [runID])
        let requests = replayLines.filter { $0["event"] as? String == "request" }
        #expect(requests.count == 2)
        for line in requests {
            let origin = try #require(line["replayOf"] as? [String: String])
            #expect(origin["run"] == runID && origin["task"] == line["task"] as? String)
        }
        let written = try space.everyWrittenByte() + Data((replay.stdout + replay.stderr).utf8)
        #expect(written.range(of: Data(Self.token.utf8)) == nil)

        // Given both logs, nothing is left to replay.
        let again = try await CourierBinary.run(
            ["replay"] + files + ["--job", "job.json", "--log-dir", space.logs.path],
            environment: ["COURIER_TEST_TOKEN": Self.token], directory: space.folder)
        #expect(again.status == 0)
        #expect(again.stdout.contains("nothing to replay"), "\(again.stdout)")
    }

    @Test("a secret the log redacted and nobody supplies is refused; nothing is sent")
    func refusesWithoutSecret() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("refuse")
        let toggle = FixtureServer.uniqueKey("toggle")
        try await Self.failedRun(space, name: toggle, key: key)
        let original = try #require(try Self.logFiles(space).first)
        let refused = try await CourierBinary.run(
            ["replay", original, "--log-dir", space.logs.path], directory: space.folder)
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("header Authorization was redacted in the log"),
            "\(refused.stderr)")
        // Said once, the others counted, as a run says its failures (trial CCC: one line a
        // task filled a cron mail).
        #expect(
            refused.stderr.components(separatedBy: "was redacted in the log").count == 3
                && refused.stderr.contains(
                    "courier: 1 more task not replayed the same way: header Authorization was redacted"
                ),
            "\(refused.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "nothing more sent")
        // A --header supplies it.
        try await Self.switchOn(toggle, space.server)
        let supplied = try await CourierBinary.run(
            [
                "replay", original, "--log-dir", space.logs.path, "--header",
                "Authorization: Bearer \(Self.token)",
            ], directory: space.folder)
        #expect(supplied.status == 0, "\(supplied.stderr)")
        #expect(
            try await ServerHits.of(key, on: space.server).requests.last?.header("Authorization")
                == "Bearer \(Self.token)")
        #expect(!supplied.stdout.contains(Self.token) && !supplied.stderr.contains(Self.token))
    }

    /// `--header` fills in a header the log redacted; it went onto every replayed request,
    /// so a bearer token reached requests that never carried one (trial S).
    @Test("--header fills the requests that carried the header, and adds it to no other")
    func headerGoesOnlyWhereItWas() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("only-where")
        let toggle = FixtureServer.uniqueKey("only-where-toggle")
        try space.writeJob(
            tasks: #"""
                {"id": "plain", "path": "/toggle", "query": {"name": "\#(toggle)", "key": "\#(key)", "t": "plain"}},
                {"id": "authed", "path": "/toggle", "query": {"name": "\#(toggle)", "key": "\#(key)", "t": "authed"},
                 "headers": {"Authorization": "Bearer ${env:COURIER_TEST_TOKEN}"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(
            backend: "curl", environment: ["COURIER_TEST_TOKEN": Self.token])
        #expect(first.status == 1, "\(first.stderr)")
        try await Self.switchOn(toggle, space.server)
        let original = try #require(try Self.logFiles(space).first)
        // Without it, `authed` is refused and `plain` sent: the replay fails, and its log's
        // `run.end` says so as its exit status does (trial S: the log said 0, the process 1).
        let refused = try await CourierBinary.run(
            ["replay", original, "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stdout.contains("; 1 refused"), "\(refused.stdout)")
        let end = try #require(
            try space.logLines().last { $0["event"] as? String == "run.end" })
        #expect(end["exitCode"] as? Int == 1, "\(end)")
        #expect((end["tasks"] as? [String: Int])?["notReplayed"] == 1, "\(end)")
        let replay = try await CourierBinary.run(
            [
                "replay", original, "--log-dir", space.logs.path, "--no-progress", "--header",
                "Authorization: Bearer \(Self.token)",
            ], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = try await ServerHits.of(key, on: space.server).requests.suffix(2)
        let authorization = Dictionary(
            uniqueKeysWithValues: replayed.map {
                ($0.path.contains("t=authed") ? "authed" : "plain", $0.header("Authorization"))
            })
        #expect(authorization["authed"] == .some("Bearer \(Self.token)"), "\(authorization)")
        #expect(authorization["plain"] == .some(nil), "\(authorization)")
    }

    /// A replay of a log folder alone, from another working folder: its log goes beside the
    /// logs it replays (it went under the working folder), and a failed one is repaired by
    /// replaying its own log (it said `courier run /…/- --resume`, a job file named `-`).
    @Test("a log-only replay of logs/JOB/ from elsewhere logs beside them; its repair is a replay")
    func logOnlyReplayFromElsewhere() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("elsewhere")
        try space.writeJob(
            tasks: #"{"id": "down", "path": "/flaky", "query": {"key": "\#(key)", "fail": "99"}}"#,
            extra: #""retry": {"maxAttempts": 1},"#)
        _ = try await space.run(backend: "curl")
        let folder = space.logs.appendingPathComponent("e2e")
        let elsewhere = space.folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let replay = try await CourierBinary.run(
            ["replay", folder.path + "/", "--no-progress"], directory: elsewhere)
        #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
        let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(logs.filter { $0.hasSuffix(".jsonl") }.count == 2, "\(logs)")
        #expect(
            !FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("logs").path))
        #expect(!replay.stdout.contains("courier run"), "\(replay.stdout)")
        #expect(
            replay.stdout.contains(
                "from the log alone: nothing saved, and the job's history does not count it; log:"),
            "\(replay.stdout)")
        // The repair replays the same logs again (a log-only replay decides nothing, so its
        // own log, replayed, would find nothing to send): run as printed, it sends again.
        let hint = try #require(
            replay.stdout.range(of: "; to repair: ").map {
                String(replay.stdout[$0.upperBound...])
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }, "\(replay.stdout)")
        #expect(hint == "courier replay \(folder.standardizedFileURL.path)", "\(hint)")
        let before = try await ServerHits.of(key, on: space.server).count
        let repair = try await CourierBinary.run(
            Array(hint.split(separator: " ").dropFirst().map(String.init)) + ["--no-progress"],
            directory: elsewhere)
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count > before, "sent again")
        // With filters, the repair chooses the same tasks (trial OO: it dropped --status).
        let filtered = try await CourierBinary.run(
            ["replay", folder.path + "/", "--status", "5xx", "--task", "d*", "--no-progress"],
            directory: elsewhere)
        #expect(
            filtered.stdout.contains(
                "to repair: courier replay \(folder.standardizedFileURL.path) --status 5xx --task 'd*'"
            ),
            "\(filtered.stdout)")
    }

    @Test("filters pick by status, error kind and task glob; --all takes ok ones too")
    func filters() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "a-503", "path": "/status/503"},
                {"id": "b-404", "path": "/status/404"},
                {"id": "a-down", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/x"},
                {"id": "b-ok", "path": "/status/200"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try Self.logFiles(space).first)
        func planned(_ extra: [String]) async throws -> [String] {
            let result = try await CourierBinary.run(
                ["replay", log, "--dry-run"] + extra, directory: space.folder)
            #expect(result.status == 0, "\(extra): \(result.stderr)")
            return result.stdout.split(separator: "\n").compactMap {
                $0.hasPrefix("courier:") ? nil : String($0.split(separator: "\t")[0])
            }.sorted()
        }
        #expect(try await planned([]) == ["a-503", "a-down", "b-404"])
        #expect(try await planned(["--status", "5xx"]) == ["a-503"])
        #expect(try await planned(["--status", "404,5xx"]) == ["a-503", "b-404"])
        #expect(try await planned(["--error-kind", "connect"]) == ["a-down"])
        #expect(try await planned(["--task", "a-*"]) == ["a-503", "a-down"])
        #expect(try await planned(["--all", "--task", "b*"]) == ["b-404", "b-ok"])
        let bad = try await CourierBinary.run(["replay", log, "--status", "6xx"])
        #expect(bad.status == 2 && bad.stderr.contains("--status expects"))
        // A glob no logged task matches is a mistake (exit 2, as `run --task`); one that
        // matches only tasks that are done leaves nothing to replay (exit 0).
        let typo = try await CourierBinary.run(["replay", log, "--task", "nope*"])
        #expect(typo.status == 2 && typo.stderr.contains("no task in the logs"), "\(typo.stderr)")
        let done = try await CourierBinary.run(["replay", log, "--task", "b-ok"])
        #expect(done.status == 0 && done.stdout.contains("nothing to replay"), "\(done.stdout)")
    }

    @Test("--pace logged keeps the logged gaps, scaled by --speed, measured at the server")
    func pacedReplay() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("pace")
        // A hand-built log: three failed requests logged 100 s apart, replayed at speed 100.
        var lines = [
            #"{"event":"run.start","ts":"2026-01-01T00:00:00.000Z","run":"r1","job":"e2e","jobFile":"j","jobSHA256":"x","backend":"curl","version":"0"}"#
        ]
        for (index, ts) in ["00:00:01.000", "00:01:41.000", "00:03:21.000"].enumerated() {
            let url = space.server.url("/echo?key=\(key)&n=\(index)").absoluteString
            lines.append(
                #"{"event":"request","ts":"2026-01-01T\#(ts)Z","run":"r1","job":"e2e","task":"p\#(index)","attempt":1,"method":"GET","url":"\#(url)","requestHeaders":{},"status":503,"outcome":"failed"}"#
            )
        }
        let log = space.folder.appendingPathComponent("hand.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: log, atomically: true, encoding: .utf8)
        let launched = Date().timeIntervalSince1970
        let result = try await CourierBinary.run(
            [
                "replay", log.path, "--pace", "logged", "--speed", "100", "--log-dir",
                space.logs.path,
            ],
            directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        let times = try await ServerHits.of(key, on: space.server).requests.map(\.time).sorted()
        #expect(times.count == 3)
        // Due 0, 1 and 2 s after the start, so never sooner than that after launch (a lower
        // bound holds on any machine: a slow one only makes them later). Measured from launch,
        // not between arrivals: a first request that arrived late under load made a gap look
        // short. The upper bound tells scaled gaps from the logged ones (200 s) and is 50
        // times the expected 2 s: a hang guard, not a speed.
        guard times.count == 3 else { return }
        #expect(times[1] - launched >= 0.95, "second due 1 s in: \(times[1] - launched)")
        #expect(times[2] - launched >= 1.95, "third due 2 s in: \(times[2] - launched)")
        #expect(times[2] - times[0] < 100, "scaled by --speed: \(times[2] - times[0]) s")
    }

    @Test("the curl form runs in the real curl and reaches the server; secrets stay variables")
    func curlFormat() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("curlform")
        let toggle = FixtureServer.uniqueKey("toggle")
        try await Self.failedRun(space, name: toggle, key: key)
        let log = try #require(try Self.logFiles(space).first)
        // `--format` alone prints, as `--dry-run` does: it once sent every request and
        // wrote the run's summary into the script.
        let sentBefore = try await ServerHits.of(key, on: space.server).count
        let printed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--format", "curl", "--task", "t1"],
            environment: ["COURIER_TEST_TOKEN": Self.token], directory: space.folder)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(
            try await ServerHits.of(key, on: space.server).count == sentBefore,
            "printing the curl form sent nothing")
        #expect(!printed.stdout.contains(Self.token), "the token is never printed")
        #expect(printed.stdout.contains("Bearer ${COURIER_TEST_TOKEN}"), "\(printed.stdout)")
        let script = printed.stdout.split(separator: "\n").filter { $0.hasPrefix("curl ") }
            .joined(separator: "\n")
        let ran = try await CourierBinary.run(
            ["-c", script], executable: URL(fileURLWithPath: "/bin/bash"),
            environment: ["COURIER_TEST_TOKEN": Self.token], directory: space.folder)
        #expect(ran.status == 0, "\(ran.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        let original = try #require(hits.first { $0.path.hasSuffix("n=1") })
        let replayed = try #require(hits.last)
        #expect(hits.count == 3)
        #expect(replayed.method == "POST" && replayed.path == original.path)
        #expect(replayed.body == original.body)
        #expect(replayed.header("Authorization") == "Bearer \(Self.token)")
        #expect(replayed.header("Content-Type") == "application/json")
    }
}
