import CourierTestSupport
import Foundation
import Testing

/// `notify` and `--ping-url` end to end: the built binary pings the fixture server's `/ping/…`
/// route, which records each ping (path, body) under its key.
@Suite("dead man's switch pings")
struct PingRunTests {
    static let backends = ["curl", "urlsession"]

    /// A check URL on the fixture server: its "UUID" is the secret part, as healthchecks.io's.
    struct Check {
        let uuid = UUID().uuidString.lowercased()
        let key: String
        let server: FixtureServer

        init(_ label: String, on server: FixtureServer) {
            key = FixtureServer.uniqueKey(label)
            self.server = server
        }

        func url(_ query: String = "") -> String {
            server.url("/ping/\(uuid)?key=\(key)\(query)").absoluteString
        }

        func hits() async throws -> [ServerHits.Entry] {
            try await ServerHits.of(key, on: server).requests
        }

        /// The path each ping went to, after the check's own (`/start`, `/0`, …).
        func paths() async throws -> [String] {
            try await hits().map {
                String($0.path.dropFirst("/ping/\(uuid)".count).prefix { $0 != "?" })
            }
        }
    }

    /// The longest bound (60 s): a loaded machine once fitted two of three attempts in 10 s.
    static let notify = #""notify": {"ping": "${env:HC_PING_URL}", "timeout": 60},"#

    static func summaryLine(_ result: CourierBinary.Result) -> String {
        result.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    @Test(
        "a run posts URL/start, then URL/0 with its summary line as the body", arguments: backends)
    func success(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-ok", on: space.server)
        try space.writeJob(
            tasks: #"{"id": "a{n}", "path": "/echo", "foreach": {"n": {"range": [1, 3]}}}"#,
            extra: Self.notify)
        let run = try await space.run(backend: backend, environment: ["HC_PING_URL": check.url()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("notify"), "\(run.stderr)")
        let hits = try await check.hits()
        #expect(try await check.paths() == ["/start", "/0"])
        #expect(hits.allSatisfy { $0.method == "POST" })
        #expect(hits.allSatisfy { $0.header("Content-Type") == "text/plain; charset=utf-8" })
        #expect(hits.first?.body.hasPrefix("courier: e2e: run ") == true, "\(hits)")
        #expect(hits.first?.body.contains("started, 3 tasks; log: ") == true, "\(hits)")
        #expect(hits.last?.body == Self.summaryLine(run), "the end's body is the summary line")
        #expect(Self.summaryLine(run).contains("3 tasks, 3 ok, 0 failed"))
        // Each ping is a line of its own, before run.end, naming no URL.
        let lines = try space.logLines()
        LogContract.check(lines)
        let pings = lines.filter { $0["event"] as? String == "ping" }
        #expect(pings.map { $0["ping"] as? String } == ["start", "success"])
        #expect(
            pings.allSatisfy { $0["outcome"] as? String == "ok" && $0["status"] as? Int == 200 })
        #expect(pings.last?["exitCode"] as? Int == 0)
        #expect(
            lines.filter { $0["event"] as? String == "request" }.count == 3, "pings are no requests"
        )
        #expect((lines.last?["requests"] as? Int) == 3)
    }

    @Test(
        "a run with a failed task posts URL/1 with its summary; the exit code is its own",
        arguments: backends)
    func failure(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-fail", on: space.server)
        try space.writeJob(
            tasks: #"{"id": "ok", "path": "/echo"}, {"id": "bad", "path": "/status/500"}"#,
            extra: Self.notify + #""retry": {"maxAttempts": 1},"#)
        let run = try await space.run(backend: backend, environment: ["HC_PING_URL": check.url()])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(try await check.paths() == ["/start", "/1"])
        #expect(try await check.hits().last?.body == Self.summaryLine(run))
        #expect(Self.summaryLine(run).contains("2 tasks, 1 ok, 1 failed"))
        let pings = try space.logLines().filter { $0["event"] as? String == "ping" }
        #expect(pings.last?["ping"] as? String == "failure" && pings.last?["exitCode"] as? Int == 1)

        // The log's readers pass the ping lines over: the report counts the two requests, and
        // a resume runs the one task not done (and pings for itself).
        let log = try #require(try ReplayTests.logFiles(space).first)
        let report = try await CourierBinary.run(["report", log], directory: space.folder)
        #expect(report.status == 0 && report.stderr.isEmpty, "\(report.stderr)")
        #expect(report.stdout.contains("requests  2 (0 retries)"), "\(report.stdout)")
        #expect(report.stdout.contains("tasks     2 total, 1 ok, 1 failed"))
        let resumed = try await space.run(
            ["--resume"], backend: backend, environment: ["HC_PING_URL": check.url()])
        #expect(resumed.status == 1)
        #expect(Self.summaryLine(resumed).contains("2 tasks, 1 ok, 1 failed, 1 request"))
        #expect(try await check.paths() == ["/start", "/1", "/start", "/1"])
    }

    @Test("explicit start, success and failure URLs, {exitCode} replaced, as Cronitor's")
    func explicitURLs() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-explicit", on: space.server)
        try space.writeJob(
            tasks: #"{"id": "bad", "path": "/status/503"}"#,
            extra: #"""
                "retry": {"maxAttempts": 1},
                "notify": {"start": "${env:CRONITOR}&state=run",
                           "success": "${env:CRONITOR}&state=complete",
                           "failure": "${env:CRONITOR}&state=fail&status_code={exitCode}"},
                """#)
        let run = try await space.run(backend: "curl", environment: ["CRONITOR": check.url()])
        #expect(run.status == 1, "\(run.stderr)")
        let queries = try await check.hits().map {
            $0.path.split(separator: "?").last.map(String.init)
        }
        #expect(
            queries == [
                "key=\(check.key)&state=run", "key=\(check.key)&state=fail&status_code=1",
            ])
    }

    @Test("--ping-url replaces the job's notify", arguments: backends)
    func commandLine(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = Check("ping-job", on: space.server)
        let flag = Check("ping-flag", on: space.server)
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#, extra: Self.notify)
        let run = try await space.run(
            ["--ping-url", flag.url()], backend: backend, environment: ["HC_PING_URL": job.url()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try await flag.paths() == ["/start", "/0"])
        #expect(try await job.hits().isEmpty)
        #expect(try await flag.hits().last?.body == Self.summaryLine(run))
    }

    @Test("--quiet with pings and metrics prints nothing on success; the ping has the summary")
    func quiet() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-quiet", on: space.server)
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        let run = try await space.run(
            ["--quiet", "--ping-url", check.url(), "--metrics-file", "m.prom"], backend: "curl")
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run.stdout)\(run.stderr)")
        #expect(try await check.paths() == ["/start", "/0"])
        #expect(
            try await check.hits().last?.body.hasPrefix("courier: e2e: 1 task, 1 ok, 0 failed")
                == true)
    }

    @Test(
        "a ping server that hangs: the run ends within the ping's bound, with its own exit code",
        arguments: backends)
    func hangingServer(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-hang", on: space.server)
        try space.writeJob(
            tasks: #"{"id": "ok", "path": "/echo"}, {"id": "bad", "path": "/status/500"}"#,
            extra:
                #""retry": {"maxAttempts": 1}, "notify": {"ping": "${env:HC_PING_URL}", "timeout": 2},"#
        )
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress",
            ],
            environment: ["HC_PING_URL": check.url("&hang=600")], directory: space.folder)
        // The server hangs for ten minutes, the pings may take 2 s: a run that waited for the
        // server runs into the hang guard (300 s) and has no status.
        let (status, stdout, stderr) = await running.exit(seconds: 300)
        #expect(status == 1, "ended with the run's own exit code: \(stderr)")
        #expect(stdout.contains("2 tasks, 1 ok, 1 failed"))
        // A warning for the end's ping. The start's hangs too: it is cut short by the run's
        // end (no warning), or, when a loaded machine stretches the run past the ping's 2 s,
        // it times out on its own first (a warning of its own).
        let warnings = stderr.split(separator: "\n").filter {
            $0.contains("(notify) failed") && !$0.contains("the start ping")
        }
        #expect(warnings.count == 1, "\(stderr)")
        #expect(
            warnings.first?.contains("the failure ping (notify) failed after 1 attempt: timeout: ")
                == true, "\(stderr)")
        #expect(warnings.first?.hasSuffix("the exit code stays 1") == true)
        let lines = try space.logLines()
        LogContract.check(lines)
        let end = lines.last { $0["event"] as? String == "ping" }
        #expect((end?["error"] as? [String: Any])?["kind"] as? String == "timeout")
        #expect(lines.last?["exitCode"] as? Int == 1)
        #expect(try await check.paths() == ["/start", "/1"], "both arrived; neither was answered")
    }

    @Test("--ping-url's own bound is 10 s: a hanging server holds the run no longer")
    func defaultBound() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-hang-default", on: space.server)
        try space.writeJob(tasks: #"{"id": "ok", "path": "/echo"}"#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--ping-url",
                check.url("&hang=600&hang_on=0"),
            ], directory: space.folder)
        // The server would hang for ten minutes; the ping gives up after 10 s. A run that
        // waited runs into the hang guard (300 s) and has no status.
        let (status, _, stderr) = await running.exit(seconds: 300)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("no answer within 10 s"), "\(stderr)")
        let end = try space.logLines().last { $0["event"] as? String == "ping" }
        let duration = try #require(end?["durationMs"] as? Double)
        #expect(duration >= 10_000, "it waited its whole bound: \(duration) ms")
    }

    @Test(
        "a failing ping is retried twice, a missing check not at all; one warning; exit unchanged")
    func failingServer() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "ok", "path": "/echo"}"#, extra: Self.notify)
        let busy = Check("ping-503", on: space.server)
        let run = try await space.run(
            backend: "curl", environment: ["HC_PING_URL": busy.url("&status=503")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try await busy.paths().filter { $0 == "/0" }.count == 3, "the first and 2 retries")
        let warnings = run.stderr.split(separator: "\n").filter {
            $0.contains("the success ping (notify) failed")
        }
        #expect(warnings.count == 1, "\(run.stderr)")
        #expect(
            warnings.first?.contains("after 3 attempts: status: answered 503, not 2xx") == true,
            "\(run.stderr)")

        let missing = Check("ping-404", on: space.server)
        let second = try await space.run(
            backend: "curl", environment: ["HC_PING_URL": missing.url("&status=404")])
        #expect(second.status == 0)
        #expect(try await missing.paths().filter { $0 == "/0" }.count == 1, "a 404 is final")

        let refused = "http://127.0.0.1:\(unusedLoopbackPort())/ping/\(UUID().uuidString)"
        let third = try await space.run(backend: "curl", environment: ["HC_PING_URL": refused])
        #expect(third.status == 0)
        #expect(
            third.stderr.contains("the success ping (notify) failed after 3 attempts: connect"),
            "\(third.stderr)")
    }

    @Test("a run that finds the job's lock held (exit 3) pings nothing, leaves the metrics be")
    func lockedRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-locked", on: space.server)
        try space.writeJob(tasks: #"{"id": "ok", "path": "/echo"}"#, extra: Self.notify)
        let out = space.folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let holder = try FileLockHolder(path: out.path, folder: true)
        defer { holder.release() }
        let metrics = space.folder.appendingPathComponent("m.prom")
        try "# the running run's\n".write(to: metrics, atomically: true, encoding: .utf8)
        let run = try await space.run(
            ["--quiet", "--metrics-file", metrics.path], backend: "curl",
            environment: ["HC_PING_URL": check.url()])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr.split(separator: "\n").count == 1
                && run.stderr.contains("another run of this job holds its lock"), "\(run.stderr)")
        #expect(try await check.hits().isEmpty)
        #expect(try String(contentsOf: metrics, encoding: .utf8) == "# the running run's\n")
    }

    @Test("a job that does not validate, with --ping-url: URL/2 at once, naming the problem")
    func invalidJob() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-invalid", on: space.server)
        try space.writeJob(tasks: #"{"id": "ok", "path": "/echo", "methd": "GET"}"#)
        let run = try await space.run(["--ping-url", check.url()], backend: "curl")
        #expect(run.status == 2, "\(run.stderr)")
        #expect(try await check.paths() == ["/2"], "no start: nothing started")
        let body = try await check.hits().first?.body ?? ""
        #expect(body.hasPrefix("courier: job.json: not a valid job (1 problem"), "\(body)")
        #expect(body.contains("methd") && body.hasSuffix("nothing was sent"), "\(body)")
    }

    @Test(
        "the ping URL is in no byte: logs, stdout, stderr, reports, replays, the metrics file",
        arguments: backends)
    func noLeak(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let check = Check("ping-secret", on: space.server)
        // A start ping that times out while the run goes on, and an end ping that times out:
        // both warn on stderr. The task that fails makes the replays send something.
        try space.writeJob(
            tasks: #"""
                {"id": "slow", "path": "/slow", "query": {"ms": "1500"}},
                {"id": "bad", "path": "/status/500"}
                """#,
            extra:
                #""retry": {"maxAttempts": 1}, "notify": {"ping": "${env:HC_PING_URL}", "timeout": 1},"#
        )
        let environment = ["HC_PING_URL": check.url("&hang=5")]
        let run = try await space.run(
            ["--metrics-file", "metrics.prom"], backend: backend, environment: environment)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("the start ping (notify) failed"), "\(run.stderr)")
        #expect(run.stderr.contains("the failure ping (notify) failed"), "\(run.stderr)")
        #expect(try await check.paths() == ["/start", "/1"], "the pings did go out")

        // A refused ping from the command line, and one for a job that does not validate.
        let refusedKey = UUID().uuidString.lowercased()
        let refused = "http://127.0.0.1:\(unusedLoopbackPort())/ping/\(refusedKey)?key=k"
        let second = try await space.run(
            ["--ping-url", refused], backend: backend, environment: environment)
        #expect(second.stderr.contains("connect"), "\(second.stderr)")
        try #"{"version": 1, "name": "bad", "tasks": [{"id": "x", "url": "ftp://x"}]}"#.write(
            to: space.folder.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let invalid = try await CourierBinary.run(
            ["run", "bad.json", "--ping-url", refused, "--backend", backend],
            directory: space.folder)
        #expect(invalid.status == 2)
        let usage = try await CourierBinary.run(
            ["run", "job.json", "--ping-url", refused, "--no-such-flag"], directory: space.folder)
        #expect(usage.status == 2)
        let notURL = try await CourierBinary.run(
            ["run", "job.json", "--ping-url", "ftp://\(refusedKey)"], directory: space.folder)
        #expect(notURL.status == 2 && notURL.stderr.contains("--ping-url expects"))

        var places = try await SecretsEverywhereTests.everyPlace(
            space, run: run, environment: environment)
        for (name, result) in [
            ("second", second), ("invalid", invalid), ("usage", usage), ("notURL", notURL),
        ] {
            places.append((name, Data((result.stdout + result.stderr).utf8)))
        }
        #expect(places.contains { $0.0 == "metrics.prom" }, "the metrics file was searched too")
        SecretsEverywhereTests.expectNoLeak(
            of: [check.uuid, "/ping/\(check.uuid)", check.url(), refusedKey, refused],
            in: places, backend: backend)
    }
}
