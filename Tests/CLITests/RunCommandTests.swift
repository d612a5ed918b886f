import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier run` end to end: the built binary against the fixture server, on both backends.
@Suite("courier run")
struct RunCommandTests {
    static let backends = ["curl", "urlsession"]

    @Test("all ok exits 0, saves outputs atomically, logs every field", arguments: backends)
    func successfulRun(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "n{n}", "path": "/echo", "query": {"n": "{n}"}, "foreach": {"n": {"range": [1, 5]}}, "save": "deep/er/{n}.json"}"#
        )
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("5 tasks, 5 ok, 0 failed, 5 requests"))
        let saved = space.folder.appendingPathComponent("out/deep/er/3.json")
        #expect(try String(contentsOf: saved, encoding: .utf8).contains(#""query": "n=3""#))
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: saved.deletingLastPathComponent().path)
        #expect(
            leftovers.sorted() == ["1.json", "2.json", "3.json", "4.json", "5.json"],
            "no temporary files left")
        let lines = try space.logLines()
        LogContract.check(lines)
        #expect(lines.count == 7)
        #expect((lines.last?["tasks"] as? [String: Int]) == ["total": 5, "ok": 5, "failed": 0])
        #expect(lines.first?["backend"] as? String == backend)
        #expect(try space.attempts("n3").first?["savedTo"] as? String == "out/deep/er/3.json")
    }

    @Test("the concurrency cap holds at the server", arguments: backends)
    func concurrencyCap(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("cap")
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "500", "key": "\#(key)"}, "foreach": {"n": {"range": [1, 9]}}}"#,
            extra: #""concurrency": 3,"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await space.server.maxConcurrency(of: key) == 3)
    }

    @Test("the rate limit spaces requests at the server", arguments: backends)
    func rateLimit(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rate")
        try space.writeJob(
            tasks:
                #"{"id": "r{n}", "path": "/echo", "query": {"key": "\#(key)"}, "foreach": {"n": {"range": [1, 8]}}}"#,
            extra: #""concurrency": 8, "rateLimit": {"perSecond": 5, "burst": 1},"#)
        let launched = Date().timeIntervalSince1970
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let times = try await ServerHits.of(key, on: space.server).requests.map(\.time).sorted()
        #expect(times.count == 8)
        guard times.count == 8 else { return }
        // One token every 200 ms: the eighth request is due 1.4 s after the first token, so it
        // cannot arrive sooner than that after launch; without the limit all eight arrive at
        // once. Measured from launch: the span between arrivals shrank below its bound twice
        // on a loaded machine when the first request arrived late.
        #expect(times[7] - launched >= 1.3, "the eighth arrived \(times[7] - launched) s in")
    }

    @Test("--concurrency overrides the job's concurrency")
    func concurrencyOverride() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("override")
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "500", "key": "\#(key)"}, "foreach": {"n": {"range": [1, 6]}}}"#,
            extra: #""concurrency": 1,"#)
        let result = try await space.run(["--concurrency", "3"], backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await space.server.maxConcurrency(of: key) == 3)
    }

    @Test("a flaky endpoint is retried; the log shows each attempt", arguments: backends)
    func retriesOnFlakyEndpoint(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("flaky")
        try space.writeJob(
            tasks: #"{"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "2"}}"#,
            extra: #""retry": {"maxAttempts": 4, "initialDelay": 0.05},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let attempts = try space.attempts("flaky")
        #expect(attempts.map { $0["attempt"] as? Int } == [1, 2, 3])
        #expect(attempts.map { $0["outcome"] as? String } == ["retry", "retry", "ok"])
        #expect(attempts.map { $0["status"] as? Int } == [503, 503, 200])
        #expect(attempts[0]["retryInMs"] != nil && attempts[2]["retryInMs"] == nil)
        #expect(try await ServerHits.of(key, on: space.server).count == 3)
    }

    @Test(
        "Retry-After is honoured in both forms, measured at the server",
        arguments: backends, ["seconds=1", "seconds=2&date=1"])
    func retryAfterGap(backend: String, form: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("after")
        try space.writeJob(
            tasks:
                #"{"id": "limited", "url": "\#(space.server.url("/retry-after?key=\(key)&times=1&\(form)").absoluteString)"}"#,
            extra: #""retry": {"maxAttempts": 2, "initialDelay": 0.01},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 2)
        // An HTTP-date has whole seconds, so "2 s from now" may be as little as 1 s away.
        let gap = hits[1].time - hits[0].time
        #expect(gap >= 0.95, "the second try came \(gap) s after the first")
        // A hang guard, 15 times the longest wait asked for (2 s), not a speed.
        #expect(gap < 30, "the second try came \(gap) s after the first")
    }

    @Test("POST is not retried; POST with an Idempotency-Key is", arguments: backends)
    func postRetries(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let plain = FixtureServer.uniqueKey("post")
        let keyed = FixtureServer.uniqueKey("postkey")
        try space.writeJob(
            tasks: #"""
                {"id": "plain", "method": "POST", "path": "/flaky", "query": {"key": "\#(plain)", "fail": "1"}, "json": {"a": 1}},
                {"id": "keyed", "method": "POST", "path": "/flaky", "query": {"key": "\#(keyed)", "fail": "1"}, "json": {"a": 1}, "headers": {"Idempotency-Key": "k-1"}}
                """#, extra: #""retry": {"initialDelay": 0.01},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "the plain POST failed")
        #expect(result.stderr.contains("task plain failed after 1 attempt: status 503"))
        #expect(try await ServerHits.of(plain, on: space.server).count == 1)
        #expect(try await ServerHits.of(keyed, on: space.server).count == 2)
        #expect(try space.attempts("keyed").last?["outcome"] as? String == "ok")
        #expect(try space.attempts("plain").first?["outcome"] as? String == "failed")
    }

    @Test("secrets reach the server and nothing that courier writes", arguments: backends)
    func secretsNeverWritten(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("secret")
        let token = "tok-\(UUID().uuidString)"
        let apiKey = "key-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "auth", "path": "/status/200", "query": {"key": "\#(key)", "k": "${env:COURIER_TEST_API_KEY}"},
                 "headers": {"X-Api-Key": "${env:COURIER_TEST_API_KEY}", "Cookie": "session=${env:COURIER_TEST_API_KEY}"},
                 "json": {"secret": "${env:COURIER_TEST_API_KEY}"}, "method": "PUT", "save": "auth.txt"},
                {"id": "broken", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/?k=${env:COURIER_TEST_API_KEY}"}
                """#,
            extra: #""auth": {"bearer": "${env:COURIER_TEST_TOKEN}"}, "retry": {"maxAttempts": 1},"#
        )
        let result = try await space.run(
            backend: backend,
            environment: ["COURIER_TEST_TOKEN": token, "COURIER_TEST_API_KEY": apiKey])
        #expect(result.status == 1, "the broken task fails: \(result.stderr)")
        let hit = try #require(try await ServerHits.of(key, on: space.server).requests.first)
        #expect(hit.header("Authorization") == "Bearer \(token)", "the secret reached the server")
        #expect(hit.header("X-Api-Key") == apiKey)
        let written = try space.everyWrittenByte() + Data((result.stdout + result.stderr).utf8)
        for secret in [token, apiKey] {
            #expect(written.range(of: Data(secret.utf8)) == nil, "\(secret) leaked")
            #expect(
                written.range(of: Data(secret.replacingOccurrences(of: "-", with: "%2D").utf8))
                    == nil)
        }
        let line = try #require(try space.attempts("auth").first)
        let headers = try #require(line["requestHeaders"] as? [String: String])
        #expect(headers["Authorization"] == "<redacted>")
        #expect(headers["X-Api-Key"] == "<redacted>")
        #expect(headers["Cookie"] == "<redacted>")
    }

    @Test("a cross-host redirect drops Authorization", arguments: backends)
    func crossHostRedirect(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("xhost")
        let target = space.server.otherHostURL("/echo?key=\(key)").absoluteString
        try space.writeJob(
            tasks: #"{"id": "hop", "path": "/redirect", "query": {"to": "\#(target)"}}"#,
            extra: #""auth": {"bearer": "${env:COURIER_TEST_TOKEN}"},"#)
        let result = try await space.run(
            backend: backend, environment: ["COURIER_TEST_TOKEN": "must-not-travel"])
        #expect(result.status == 0, "\(result.stderr)")
        let hit = try #require(try await ServerHits.of(key, on: space.server).requests.first)
        #expect(hit.header("Authorization") == nil)
        #expect(
            try space.attempts("hop").first?["url"] as? String
                == space.server.url("/redirect?to=\(URLEncoding.encode(target))").absoluteString)
    }

    @Test("a missing environment variable sends nothing and exits 2")
    func missingEnvironmentSendsNothing() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("noenv")
        try space.writeJob(
            tasks:
                #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}, "headers": {"X-Key": "${env:COURIER_TEST_NOT_SET_ANYWHERE}"}}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "tasks[0].headers.X-Key: environment variable COURIER_TEST_NOT_SET_ANYWHERE is not set"
            ))
        #expect(try await ServerHits.of(key, on: space.server).count == 0)
        #expect(!FileManager.default.fileExists(atPath: space.logs.path))
    }

    @Test("an unexpected status exits 1 and says why")
    func failedTaskExitsOne() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "gone", "path": "/status/404"}, {"id": "fine", "path": "/status/404", "expect": {"status": [404]}}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        #expect(result.stdout.contains("2 tasks, 1 ok, 1 failed"))
        #expect(
            result.stderr.contains("task gone failed after 1 attempt: status 404, expected 2xx"))
        let line = try #require(try space.attempts("gone").first)
        #expect((line["error"] as? [String: String])?["kind"] == "unexpectedStatus")
    }

    @Test("a progress line is drawn on a terminal, and only there")
    func progressLine() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "p{n}", "path": "/slow", "query": {"ms": "300"}, "foreach": {"n": {"range": [1, 6]}}}"#,
            extra: #""concurrency": 2,"#)
        let terminal = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path],
            environment: TerminalControlTests.drawing, directory: space.folder,
            inTerminal: true)
        let (status, output) = await terminal.wait(seconds: 300)
        #expect(status == 0, "\(output)")
        #expect(output.contains("/6] "), "a progress line: \(output)")
        #expect(output.contains("req/s") && output.contains("ETA"))
        #expect(output.contains("\r\u{1B}[K"), "redrawn in place")
        let piped = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", space.logs.path], directory: space.folder)
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("req/s"), "no progress line when stderr is not a terminal")
        let quiet = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder,
            inTerminal: true)
        #expect(!(await quiet.wait(seconds: 300)).output.contains("req/s"))
    }

    @Test("a range may reach 2^63 - 1: its bounds are read as written, not through a Double")
    func rangeToIntMax() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "t{n}", "path": "/x/{n}", "foreach": {"n": {"range": [9223372036854775806, 9223372036854775807]}}}"#
        )
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout.contains("t9223372036854775806\t")
                && plan.stdout.contains("/x/9223372036854775807"))
    }

    @Test("on a terminal, each failure message first clears the progress line")
    func failuresClearTheProgressLine() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "f{n}", "path": "/status/50{n}", "foreach": {"n": {"range": [1, 3]}}}"#,
            extra: #""retry": {"maxAttempts": 1},"#)
        // Three statuses, three reasons: failures of one reason are printed once.
        let terminal = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path],
            environment: TerminalControlTests.drawing, directory: space.folder,
            inTerminal: true)
        let (status, output) = await terminal.wait(seconds: 300)
        #expect(status == 1, "\(output)")
        let failures = output.components(separatedBy: "courier: e2e: task f").count - 1
        let cleared = output.components(separatedBy: "\r\u{1B}[Kcourier: e2e: task f").count - 1
        #expect(failures == 3 && cleared == 3, "\(output.debugDescription)")
    }

    @Test("a log that cannot be written makes the run fail loudly")
    func logWriteFailure() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "t{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 20]}}}"#)
        // Files may grow to 1 KiB: run.start fits, the request lines do not (EFBIG; SIGXFSZ is
        // ignored, and an ignored signal stays ignored across exec).
        let command =
            "trap '' XFSZ; ulimit -f 1; exec '\(CourierBinary.url.path)' run job.json --log-dir '\(space.logs.path)' --no-progress"
        let shell = try ChildProcess(
            "/bin/bash", ["-c", command], directory: space.folder, stdout: .null, stderr: .pipe)
        let stderr = try await OffPoolRead.all(shell.errors!)
        let status = await shell.exit(seconds: 120)
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("the log is incomplete"), "\(stderr)")
    }

    @Test("a symbolic link out of outputDir is not followed")
    func symlinkEscape() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let outside = space.folder.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: space.folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: space.folder.appendingPathComponent("out/link"), withDestinationURL: outside)
        try space.writeJob(
            tasks:
                #"{"id": "escape", "path": "/echo", "save": "link/stolen.json"}, {"id": "fine", "path": "/echo", "save": "ok/fine.json"}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        #expect(result.stderr.contains("task escape failed"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/ok/fine.json").path))
        let line = try #require(try space.attempts("escape").first)
        #expect((line["error"] as? [String: String])?["kind"] == "save")
    }

    @Test("--quiet prints nothing when all is well")
    func quietRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/status/204"}"#)
        let result = try await space.run(["--quiet"], backend: "curl")
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
    }

    @Test("--dry-run prints the plan and sends nothing")
    func dryRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("dry")
        try space.writeJob(
            tasks:
                #"{"id": "d{n}", "path": "/echo", "query": {"key": "\#(key)", "s": "${env:COURIER_TEST_TOKEN}"}, "foreach": {"n": [1, 2]}, "save": "d/{n}.json"}"#
        )
        let result = try await space.run(
            ["--dry-run"], backend: "curl", environment: ["COURIER_TEST_TOKEN": "dry-secret"])
        #expect(result.status == 0)
        #expect(
            result.stdout.contains(
                "d1\tGET \(space.server.baseURL.absoluteString)/echo?key=\(key)&s=<redacted>\t-> out/d/1.json"
            ))
        #expect(result.stdout.contains("2 tasks on curl, concurrency 8; dry run, nothing sent"))
        #expect(!result.stdout.contains("dry-secret"))
        #expect(try await ServerHits.of(key, on: space.server).count == 0)
    }

    @Test("--base-url runs the same job against another server, the file untouched")
    func baseURLOption() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("base")
        // The file's baseURL is a port nothing listens on.
        let text =
            #"{"version": 1, "name": "e2e", "baseURL": "http://127.0.0.1:\#(unusedLoopbackPort())/v1", "outputDir": "out", "retry": {"maxAttempts": 1}, "tasks": [{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}, "save": "a.json"}]}"#
        let job = space.folder.appendingPathComponent("job.json")
        try text.write(to: job, atomically: true, encoding: .utf8)
        let result = try await space.run(
            ["--base-url", space.server.baseURL.absoluteString], backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        // The summary says where the files went.
        #expect(result.stdout.contains("; outputs: out; log: "), "\(result.stdout)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(
            hits.count == 1 && hits.allSatisfy { $0.path.hasPrefix("/echo?") },
            "\(hits.map(\.path))")
        #expect(try String(contentsOf: job, encoding: .utf8) == text, "the file is as it was")
        // A failed run's repair names the server too (trial NN: it went to the file's).
        try text.replacingOccurrences(
            of: #""save": "a.json"}"#,
            with: #""save": "a.json"}, {"id": "b", "path": "/no-such-route"}"#
        )
        .write(to: job, atomically: true, encoding: .utf8)
        let failed = try await space.run(
            ["--base-url", space.server.baseURL.absoluteString], backend: "curl")
        #expect(failed.status == 1, "\(failed.stdout)")
        #expect(
            failed.stdout.contains("--resume --base-url \(space.server.baseURL.absoluteString)"),
            "\(failed.stdout)")
        // A resume or a replay --job without it goes to the same server, and says so (trial
        // QQ: they went to the file's).
        let hitsBefore = try await ServerHits.of(key, on: space.server).count
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.stderr.contains("sent to --base-url"), "\(resumed.stderr)")
        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).filter { $0.hasSuffix(".jsonl") }.sorted().first)
        let replayed = try await CourierBinary.run(
            [
                "replay", space.logs.appendingPathComponent("e2e/\(log)").path, "--job",
                "job.json", "--all", "--no-progress",
            ], directory: space.folder)
        #expect(replayed.stderr.contains("against --base-url"), "\(replayed.stderr)")
        #expect(
            try await ServerHits.of(key, on: space.server).count == hitsBefore + 1,
            "the replay's a.json went to the fixture")
        let logOnly = try await CourierBinary.run(
            ["replay", "logs", "--base-url", space.server.baseURL.absoluteString],
            directory: space.folder)
        #expect(logOnly.status == 2 && logOnly.stderr.contains("--base-url needs --job"))
        // The report's too, from the run's `run.start` (trial PP: it left it out).
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(
            report.stdout.contains("--resume --base-url \(space.server.baseURL.absoluteString)"),
            "\(report.stdout)")
        let bad = try await space.run(["--base-url", "ftp://example.com"], backend: "curl")
        #expect(bad.status == 2)
        #expect(
            bad.stderr.contains("--base-url takes an absolute http or https URL"), "\(bad.stderr)")
    }

    /// A soft limit of open files far under what `concurrency` needs (a socket a task, a file
    /// or two while it saves) is raised to the hard one at start: 300 saves in flight under a
    /// soft limit of 256 all succeed.
    @Test("the open-files soft limit is raised to the hard one")
    func openFileLimitRaised() async throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        // A machine whose hard limit is itself low cannot show it.
        guard limit.rlim_max >= 4096 else { return }
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "200", "n": "{n}"}, "foreach": {"n": {"range": [1, 300]}}, "save": "s/{n}.json"}"#,
            extra: #""concurrency": 300,"#)
        let command =
            "ulimit -Sn 256 && exec '\(CourierBinary.url.path)' run job.json --log-dir '\(space.logs.path)' --backend curl --no-progress --quiet"
        let result = try await CourierBinary.run(
            ["-c", command], executable: URL(fileURLWithPath: "/bin/sh"),
            directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/s").path)
        #expect(saved.count == 300)
    }

    /// One outage is one reason, though each refused connection says how many milliseconds it
    /// took ("after 0 ms", "after 8 ms"): grouped by the reason's words, not its numbers.
    @Test("an outage's failures are one group, whatever the numbers in their messages")
    func outageIsOneGroup() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let port = unusedLoopbackPort()
        try space.writeJob(
            tasks:
                #"{"id": "down{n}", "url": "http://127.0.0.1:\#(port)/x/{n}", "foreach": {"n": {"range": [1, 30]}}}"#,
            extra: #""retry": {"maxAttempts": 1}, "concurrency": 4,"#)
        let result = try await space.run(["--quiet"], backend: "curl")
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains(" failed after 1 attempt: ") }.count == 1, "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("courier: e2e: 29 more tasks failed the same way: ") },
            "\(lines)")
    }

    /// What cron mails after a failed night: each reason once with a count, and the summary
    /// ending with the command that repairs it (ten copies of one error and "see the log"
    /// before).
    @Test("failures are grouped by reason, and the summary ends with the repair")
    func failedNightOutput() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "f{n}", "path": "/status/500", "foreach": {"n": {"range": [1, 12]}}},
                {"id": "gone", "path": "/status/404"}
                """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        let result = try await space.run(["--quiet"], backend: "curl")
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let failures = lines.filter { $0.contains(" failed after 1 attempt: ") }
        #expect(failures.count == 2, "one line per reason: \(lines)")
        #expect(failures.contains { $0.hasPrefix("courier: e2e: task f1 failed") }, "\(lines)")
        #expect(
            lines.contains { $0.hasPrefix("courier: e2e: 11 more tasks failed the same way: ") },
            "\(lines)")
        #expect(!result.stderr.contains("see the log"), "\(lines)")
        let summary = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // The job file's absolute path: the line is pasted wherever cron's mail is read.
        #expect(summary.contains("; to repair: courier run /"), "\(summary)")
        #expect(summary.hasSuffix("/job.json --resume"), "\(summary)")
        // And it does repair: the next --resume sends the 13 failed tasks again, nothing else.
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.stdout.contains("13 tasks"), "\(resumed.stdout)")
    }

    @Test("a second run of a locked job exits 3 at once")
    func lockedJob() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/status/200"}"#)
        let out = space.folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let holder = try FileLockHolder(path: out.path, folder: true)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 3)
        #expect(result.stderr.contains("another run of this job holds its lock"))
        holder.release()
        #expect(try await space.run(backend: "curl").status == 0, "free again once released")
    }

    /// The lock is the job's, on its output folder: another log folder, the log on stdout,
    /// or a shard beside a whole run do not get round it (they overlapped before).
    @Test("one lock per job, whatever the log folder; no shard beside a whole run")
    func oneLockPerJob() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("lock")
        try space.writeJob(
            // Two minutes: the run must still hold the lock after three other runs, which
            // took over 30 s on a loaded machine (it is killed below).
            tasks: #"{"id": "slow", "path": "/slow", "query": {"ms": "120000", "key": "\#(key)"}}"#,
            extra: #""timeout": 180,"#)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        try await ServerArrivals.wait(for: 1, key: key, on: space.server)
        let other = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "other-logs", "--no-progress"],
            directory: space.folder)
        #expect(other.status == 3, "another --log-dir: \(other.stderr)")
        let stdout = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "-", "--no-progress"], directory: space.folder)
        #expect(stdout.status == 3, "--log-dir -: \(stdout.stderr)")
        let shard = try await CourierBinary.run(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--shard", "0/2",
                "--no-progress",
            ], directory: space.folder)
        #expect(shard.status == 3, "a shard beside a whole run: \(shard.stderr)")
        #expect(shard.stderr.contains("a shard does not run beside it"))
        running.send(SIGKILL)
        _ = await running.wait(seconds: 300)
        // Once the holder is gone (kill -9: the kernel releases the lock), runs go on.
        try space.writeJob(tasks: #"{"id": "slow", "path": "/status/200"}"#)
        let after = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "other-logs", "--no-progress"],
            directory: space.folder)
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test("bad command lines exit 2")
    func usageErrors() async throws {
        #expect(try await CourierBinary.run(["run"]).status == 2)
        #expect(
            try await CourierBinary.run(["run", "x.json", "--backend", "carrier-pigeon"]).status
                == 2)
        #expect(
            try await CourierBinary.run(["run", "x.json", "--concurrency", "0"]).stderr.contains(
                "--concurrency expects a whole number"))
        let missing = try await CourierBinary.run(["run", "no-such-job.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no-such-job.json: cannot read the file"))
        // A dry run's plan is text: `--json` beside it is refused, not passed over.
        let jsonPlan = try await CourierBinary.run(["run", "x.json", "--dry-run", "--json"])
        #expect(
            jsonPlan.status == 2 && jsonPlan.stderr.contains("give one of --json and --dry-run"))
    }
}
