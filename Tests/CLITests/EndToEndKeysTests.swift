import CourierTestSupport
import Foundation
import Testing

/// Job keys and command-line options that had no end-to-end test, each run through the built
/// `courier` against the loopback fixture servers and judged by what the server received (its
/// record under `?key=`), or by what the log, the outputs and the exit code say:
///
/// - `auth.header`, job-level and task-level: the server gets the named header with the exact
///   value, and the value is redacted from every log file;
/// - `since.header`: the response header's value is the cursor kept, and the next run sends it
///   (here in a request header of the task's);
/// - `rateLimit.scope: "host"`: each host's requests keep the rate, and one host's bucket does
///   not hold back another's;
/// - `tls.clientCertificate`, `clientKey` (encrypted), `clientKeyPassphrase` and `caBundle`: the
///   mutual-TLS server saw the client certificate (curl); URLSession refuses the job;
/// - the four retry switches `onNetworkError`, `respectRetryAfter`, `nonIdempotent` and
///   `onExpectation`, each set true and false, counted in requests at the server, so a mapping
///   swapped in the decoder fails;
/// - `courier bench -d` and `courier bench --body @FILE`;
/// - `courier replay --concurrency N` and `--quiet`.
@Suite("keys and options end to end")
struct EndToEndKeysTests {
    /// The requests the fixture server recorded under `key`.
    static func hits(_ key: String, _ server: FixtureServer) async throws -> [ServerHits.Entry] {
        try await ServerHits.of(key, on: server).requests
    }

    /// Every log file's text, joined: what a secret must never be found in.
    static func logText(_ space: JobWorkspace) throws -> String {
        let folder = space.logs.appendingPathComponent("e2e")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
        }.joined()
    }

    // MARK: auth.header

    @Test(
        "auth.header: the job's API key and a task's own reach the server exactly, redacted in the log",
        arguments: RunCommandTests.backends)
    func authHeader(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let jobKey = FixtureServer.uniqueKey("authjob-\(backend)")
        let taskKey = FixtureServer.uniqueKey("authtask-\(backend)")
        // Characters a sloppy header writer or redactor could mangle: spaces, '=', '/', '+'.
        let jobSecret = "job key \(UUID().uuidString)/+=="
        // Written into the job file as it is: an auth value is a secret without ${env:…}.
        let taskSecret = "task-key-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "job-auth", "path": "/echo", "query": {"key": "\#(jobKey)"}},
                {"id": "task-auth", "path": "/echo", "query": {"key": "\#(taskKey)"},
                 "auth": {"header": {"name": "X-Task-Token", "value": "\#(taskSecret)"}}}
                """#,
            extra:
                #""auth": {"header": {"name": "X-Api-Key", "value": "${env:COURIER_E2E_API_KEY}"}},"#
        )
        let result = try await space.run(
            backend: backend, environment: ["COURIER_E2E_API_KEY": jobSecret])
        #expect(result.status == 0, "\(result.stderr)")

        let jobHits = try await Self.hits(jobKey, space.server)
        #expect(jobHits.count == 1)
        #expect(jobHits.first?.header("X-Api-Key") == jobSecret, "the job's key, byte for byte")
        let taskHits = try await Self.hits(taskKey, space.server)
        #expect(taskHits.count == 1)
        #expect(taskHits.first?.header("X-Task-Token") == taskSecret)
        // A task's auth replaces the job's, it is not added to it.
        #expect(taskHits.first?.header("X-Api-Key") == nil, "the job's key is not sent")

        // The log names the headers and redacts their values.
        let headers = try space.attempts("job-auth").first?["requestHeaders"] as? [String: String]
        #expect(headers?["X-Api-Key"] == "<redacted>", "\(headers ?? [:])")
        let taskHeaders =
            try space.attempts("task-auth").first?["requestHeaders"] as? [String: String]
        #expect(taskHeaders?["X-Task-Token"] == "<redacted>", "\(taskHeaders ?? [:])")
        let text = try Self.logText(space)
        #expect(!text.isEmpty)
        for secret in [jobSecret, taskSecret] {
            #expect(!text.contains(secret), "a secret is in the log")
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
    }

    // MARK: since.header

    @Test(
        "since.header: the response header's value is kept and sent back by the next run",
        arguments: RunCommandTests.backends)
    func sinceHeader(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sinceheader-\(backend)")
        // /etag?v=V answers with `ETag: "V"`: the sync token. The task sends its cursor in a
        // request header, X-Sync-Token, so the server's record shows what each run offered.
        func writeJob(token: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "sync", "path": "/etag", "query": {"key": "\#(key)", "v": "\#(token)"},
                     "headers": {"X-Sync-Token": "{since}"},
                     "since": {"header": "ETag", "start": "from-the-start"}, "save": "sync.json"}
                    """#)
        }
        try writeJob(token: "token-1")
        var result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        try writeJob(token: "token-2")
        result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")

        let sent = try await Self.hits(key, space.server).map { $0.header("X-Sync-Token") }
        // The first run had no cursor: `start`. The second sent the first run's ETag, as the
        // server wrote it, quotes and all.
        #expect(sent == ["from-the-start", "\"token-1\""], "\(sent)")
        let cursors = try String(
            contentsOf: space.folder.appendingPathComponent("out/.courier/since"), encoding: .utf8)
        #expect(cursors.contains(#""sync":"\"token-2\"""#), "the second run's token: \(cursors)")
    }

    // MARK: rateLimit.scope host

    @Test(
        "rateLimit scope host: each host keeps the rate, and one host's bucket does not hold back another's",
        arguments: RunCommandTests.backends)
    func rateLimitPerHost(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let server = space.server
        let keyA = FixtureServer.uniqueKey("scopeA-\(backend)")
        let keyB = FixtureServer.uniqueKey("scopeB-\(backend)")
        // A bucket gives 2 requests at once, then one every 5 s. Host A is 127.0.0.1:port,
        // host B localhost:otherPort. a1, a2, a3 and c (host B) start at once; b1 and b2 (host
        // B) use a capture of c's, so they start only once c has its answer, after the other
        // four have all taken their tokens. With a bucket per host, two of the a's go at once
        // and the third 5 s later, c at once and b1 or b2 right after it, the other 5 s later.
        // With one bucket for the job the first four go at 0, 0, 5 and 10 s, whichever order
        // they take them in, and b1 and b2 at 15 and 20 s: after every request to host A. The
        // test does not depend on which of the tasks that start together is first.
        let hostA = server.url("/echo").absoluteString
        let hostB = server.otherHostURL("/echo").absoluteString
        try space.writeJob(
            tasks: #"""
                {"id": "a{n}", "url": "\#(hostA)", "query": {"key": "\#(keyA)", "n": "{n}"},
                 "foreach": {"n": {"range": [1, 3]}}},
                {"id": "c", "url": "\#(hostB)", "query": {"key": "\#(keyB)", "n": "c"},
                 "capture": {"seen": {"json": "/method"}}},
                {"id": "b{n}", "url": "\#(hostB)", "query": {"key": "\#(keyB)", "n": "{n}", "after": "{seen}"},
                 "foreach": {"n": {"range": [1, 2]}}}
                """#,
            extra:
                #""concurrency": 6, "rateLimit": {"perSecond": 0.2, "burst": 2, "scope": "host"},"#
        )
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")

        let a = try await Self.hits(keyA, server).map(\.time).sorted()
        let b = try await Self.hits(keyB, server).map(\.time).sorted()
        try #require(a.count == 3 && b.count == 3, "\(a) \(b)")
        // Lower bounds: each host's third request waited for its bucket to refill, 5 s after
        // the host's first token was taken. That is when the log says the first was handed to
        // the transport (`ts`), not when the server saw it: on a loaded machine the first
        // request once took 2 s to arrive, and the third then came 2.9 s after it.
        func firstSent(_ prefix: String) throws -> Double {
            try space.logLines().filter {
                $0["event"] as? String == "request"
                    && ($0["task"] as? String)?.hasPrefix(prefix) == true
            }.compactMap {
                ($0["ts"] as? String).flatMap(RequestTimeTests.date)
            }.min() ?? .infinity
        }
        let sentA = try firstSent("a")
        let sentB = min(try firstSent("c"), try firstSent("b"))
        #expect(a[2] - sentA >= 4.9, "host A: \(a[2] - sentA) s from the first token to the third")
        #expect(b[2] - sentB >= 4.9, "host B: \(b[2] - sentB) s from the first token to the third")
        // Per host, not per job: host B's second request (the first of b1, b2) arrived before
        // host A's third, which A's bucket held 5 s. This is an order the server saw, not a
        // time: with one bucket for the job it comes after every request to A, and on a slow
        // machine it holds unless a request of milliseconds is held up 5 s.
        #expect(b[1] < a[2], "B's second at +\(b[1] - a[0]) s, A's third at +\(a[2] - a[0]) s")
    }

    // MARK: tls

    /// Copies the TLS fixture's CA, client certificate and encrypted key into the workspace,
    /// to be named by relative paths, and writes a job that asks the mutual-TLS listener who
    /// it saw. Returns the key's passphrase.
    static func writeTLSJob(_ space: JobWorkspace, tls: TLSFixture, withClient: Bool = true)
        throws -> String
    {
        let certs = space.folder.appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: certs, withIntermediateDirectories: true)
        for name in ["ca.pem", "client.pem", "client-key-encrypted.pem"] {
            try FileManager.default.copyItem(
                at: tls.file(name), to: certs.appendingPathComponent(name))
        }
        let client =
            withClient
            ? #""clientCertificate": "certs/client.pem", "clientKey": "certs/client-key-encrypted.pem", "clientKeyPassphrase": "${env:COURIER_E2E_KEY_PASSPHRASE}","#
            : ""
        try space.writeJob(
            tasks: #"""
                {"id": "who", "url": "\#(tls.mutualURL("/who").absoluteString)", "save": "who.json",
                 "expect": {"json": {"/clientCN": "courier-client"}}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "tls": {\#(client) "caBundle": "certs/ca.pem"},"#
        )
        return try String(contentsOf: tls.file("client-passphrase.txt"), encoding: .utf8)
    }

    @Test("tls: the client certificate and its encrypted key reach a mutual-TLS server (curl)")
    func tlsClientCertificate() async throws {
        let tls = try TestServers.tls()
        let space = try JobWorkspace()
        defer { space.remove() }
        let passphrase = try Self.writeTLSJob(space, tls: tls)
        #expect(!passphrase.isEmpty)

        let result = try await space.run(
            backend: "curl", environment: ["COURIER_E2E_KEY_PASSPHRASE": passphrase])
        #expect(result.status == 0, "\(result.stderr)")
        // The server's own word on whom it saw: the subject of the certificate the handshake
        // verified against ca.pem.
        let saved = space.folder.appendingPathComponent("out/who.json")
        let body = try JSONSerialization.jsonObject(with: Data(contentsOf: saved)) as? [String: Any]
        #expect(body?["clientCN"] as? String == "courier-client", "\(body ?? [:])")
        #expect(try !Self.logText(space).contains(passphrase), "the passphrase is a secret")

        // The key cannot be read with another passphrase: the run fails, and says nothing of
        // either passphrase.
        let wrong = "not-\(passphrase)"
        let refused = try await space.run(
            backend: "curl", environment: ["COURIER_E2E_KEY_PASSPHRASE": wrong])
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        let written = try Self.logText(space) + refused.stdout + refused.stderr
        #expect(!written.contains(wrong) && !written.contains(passphrase))
    }

    @Test("tls: without a client certificate the mutual-TLS server refuses (the control)")
    func tlsWithoutClientCertificate() async throws {
        let tls = try TestServers.tls()
        let space = try JobWorkspace()
        defer { space.remove() }
        _ = try Self.writeTLSJob(space, tls: tls, withClient: false)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try space.attempts("who").first?["outcome"] as? String == "failed")
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/who.json").path))
    }

    @Test("tls: the urlsession backend refuses a job with tls, exit 2, before sending anything")
    func tlsRefusedByURLSession() async throws {
        let tls = try TestServers.tls()
        let space = try JobWorkspace()
        defer { space.remove() }
        let passphrase = try Self.writeTLSJob(space, tls: tls)
        let result = try await space.run(
            backend: "urlsession", environment: ["COURIER_E2E_KEY_PASSPHRASE": passphrase])
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        // The message names the backend, the options it cannot do, and that nothing went.
        for words in [
            "--backend urlsession", "TLS options", "clientKeyPassphrase", "nothing was sent",
        ] {
            #expect(result.stderr.contains(words), "\(result.stderr)")
        }
        #expect(!result.stderr.contains(passphrase))
        // Nothing was sent: no request line was logged, nothing saved.
        let lines = (try? space.logLines()) ?? []
        #expect(lines.allSatisfy { $0["event"] as? String != "request" }, "\(lines)")
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/who.json").path))
    }

    // MARK: retry switches

    /// Writes a job of one task whose `retry` sets `switchName` to `value`, over a job-level
    /// `retry` that sets it the other way (so a task's override is what decides). Retries are
    /// quick and without jitter; the host gate is off, so only the task's retry policy decides
    /// whether another request goes.
    static func writeRetryJob(
        _ space: JobWorkspace, task: String, switchName: String, value: Bool,
        retry: String = #""maxAttempts": 3"#
    ) throws {
        try space.writeJob(
            tasks: #"""
                \#(task.dropLast()), "retry": {"\#(switchName)": \#(value)}}
                """#,
            extra: #"""
                "hostThrottle": false, "retry": {\#(retry), "initialDelay": 0.01, "jitter": false, "\#(switchName)": \#(!value)},
                """#)
    }

    @Test(
        "retry.onNetworkError: a dropped connection is retried when true, not when false",
        arguments: RunCommandTests.backends, [true, false])
    func onNetworkError(backend: String, value: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("netretry-\(backend)-\(value)")
        // /drop closes the connection without an answer, on every attempt.
        try Self.writeRetryJob(
            space, task: #"{"id": "t", "path": "/drop", "query": {"key": "\#(key)"}}"#,
            switchName: "onNetworkError", value: value)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "\(result.stderr)")
        let count = try await Self.hits(key, space.server).count
        #expect(count == (value ? 3 : 1), "\(count) requests")
        #expect(try space.attempts("t").count == (value ? 3 : 1))
    }

    @Test(
        "retry.respectRetryAfter: true keeps to a Retry-After (too long: the task ends), false backs off instead",
        arguments: RunCommandTests.backends, [true, false])
    func respectRetryAfter(backend: String, value: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("retryafter-\(backend)-\(value)")
        // A 429 asking for an hour's wait, then 200s. Respected, the hour is more than
        // maxDelay, so the task ends after one request; ignored, the 0.01 s backoff sends a
        // second, which succeeds.
        try Self.writeRetryJob(
            space,
            task:
                #"{"id": "t", "path": "/retry-after", "query": {"key": "\#(key)", "times": "1", "seconds": "3600"}}"#,
            switchName: "respectRetryAfter", value: value,
            retry: #""maxAttempts": 3, "maxDelay": 5"#)
        let result = try await space.run(backend: backend)
        let count = try await Self.hits(key, space.server).count
        if value {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(count == 1, "\(count) requests")
            #expect(result.stderr.contains("more than maxDelay"), "\(result.stderr)")
        } else {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(count == 2, "\(count) requests")
        }
    }

    @Test(
        "retry.nonIdempotent: a POST that got a 503 is retried when true, not when false",
        arguments: RunCommandTests.backends, [true, false])
    func nonIdempotent(backend: String, value: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("post-\(backend)-\(value)")
        // /flaky answers 503 to the first request of the key, then 200.
        try Self.writeRetryJob(
            space,
            task:
                #"{"id": "t", "method": "POST", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"}, "json": {"order": 1}}"#,
            switchName: "nonIdempotent", value: value)
        let result = try await space.run(backend: backend)
        let hits = try await Self.hits(key, space.server)
        #expect(hits.allSatisfy { $0.method == "POST" && $0.body.contains("order") })
        if value {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(hits.count == 2, "\(hits.count) requests")
        } else {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(hits.count == 1, "\(hits.count) requests")
        }
    }

    @Test(
        "retry.onExpectation: a 200 whose JSON is not yet as expected is polled again when true, not when false",
        arguments: RunCommandTests.backends, [true, false])
    func onExpectation(backend: String, value: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("poll-\(backend)-\(value)")
        // /flaky with status=200: {"ok": false} to the first request, {"ok": true} after.
        try Self.writeRetryJob(
            space,
            task:
                #"{"id": "t", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1", "status": "200"}, "expect": {"json": {"/ok": true}}}"#,
            switchName: "onExpectation", value: value)
        let result = try await space.run(backend: backend)
        let count = try await Self.hits(key, space.server).count
        if value {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(count == 2, "\(count) requests")
        } else {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(count == 1, "\(count) requests")
            let error = try space.attempts("t").last?["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "expectation", "\(error ?? [:])")
        }
    }

    // MARK: bench

    @Test("bench -d SECONDS sends for at least that long, then stops")
    func benchDuration() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchdur")
        let running = try CourierBinary.launch(
            [
                "bench", server.url("/echo?key=\(key)").absoluteString, "-d", "2", "-c", "2",
                "--warmup", "0", "--rounds", "1", "--json",
            ], directory: nil)
        // A hang guard, not a speed: 60 s for a bench of 2 s (30 times over). It stopped by
        // itself: a status of nil would mean it had to be killed.
        let (status, stdout, stderr) = await running.exit(seconds: 300)
        #expect(status == 0, "\(stderr)")
        let line = try #require(jsonLines(stdout).first, "\(stdout)")
        let reported = try #require(line["requests"] as? Int, "\(line)")
        #expect(reported > 0 && line["errors"] as? Int == 0, "\(line)")

        let times = try await Self.hits(key, server).map(\.time).sorted()
        #expect(times.count >= reported, "the server saw every request the bench counted")
        // A lower bound on the bench's own clock: it sent for the 2 s asked. (The server's
        // first-to-last span is no measure: on a loaded machine the bench once got the CPU
        // only for the last 34 ms of its 2 s.)
        let seconds = try #require(line["seconds"] as? Double, "\(line)")
        #expect(seconds >= 2, "sent for \(seconds) s")
    }

    @Test(
        "bench --body @FILE sends the file's exact bytes, on each backend",
        arguments: RunCommandTests.backends)
    func benchBodyFile(backend: String) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchbody-\(backend)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A leading '@' (the file is not read again as a name), CRLF, tabs, multi-byte
        // characters, a NUL, and trailing blank lines, which a trimming reader would lose.
        let content = "@not-a-file\r\n{\"a\": \"läuft ✓\"}\t\u{0}end\n\n\n"
        let file = folder.appendingPathComponent("body.txt")
        try Data(content.utf8).write(to: file)

        let result = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(key)").absoluteString, "--backend", backend,
            "--method", "POST", "--body", "@\(file.path)", "-n", "3", "-c", "1", "--warmup", "0",
            "--rounds", "1", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try await Self.hits(key, server)
        #expect(hits.count == 3)
        for hit in hits {
            #expect(hit.method == "POST")
            #expect(hit.body == content, "\(hit.body.debugDescription)")
            #expect(hit.header("Content-Length") == "\(Data(content.utf8).count)")
        }
    }

    // MARK: replay

    /// The log file of the job's first run.
    static func firstLog(_ space: JobWorkspace) throws -> String {
        let folder = space.logs.appendingPathComponent("e2e")
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.hasSuffix(".jsonl")
            }.sorted().first)
        return folder.appendingPathComponent(file).path
    }

    @Test(
        "replay --concurrency N: at most N of the replayed requests in flight, and N reached",
        arguments: RunCommandTests.backends)
    func replayConcurrency(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("replayconc-\(backend)")
        // Four slow requests, one at a time, each failing its expectation (the fixture answers
        // 200). The replay, without --job, re-sends them as logged: 200 is then a success.
        try space.writeJob(
            tasks: #"""
                {"id": "s{n}", "path": "/slow", "query": {"ms": "2500", "key": "\#(key)", "n": "{n}"},
                 "expect": {"status": [201]}, "foreach": {"n": {"range": [1, 4]}}}
                """#,
            extra: #""concurrency": 1, "retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: backend)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(try await space.server.maxConcurrency(of: key) == 1, "the run sent one at a time")

        let replay = try await CourierBinary.run(
            [
                "replay", try Self.firstLog(space), "--log-dir", space.logs.path, "--backend",
                backend, "--concurrency", "2", "--no-progress",
            ], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout) \(replay.stderr)")
        #expect(try await Self.hits(key, space.server).count == 8, "four, then four replayed")
        // Without --concurrency the replay would send all four at once (its default is 8).
        // Two at once is reached as long as the second starts within the first's 2.5 s.
        #expect(try await space.server.maxConcurrency(of: key) == 2)
    }

    @Test(
        "replay --quiet: nothing on stdout when the replay succeeds; failures still on stderr",
        arguments: RunCommandTests.backends)
    func replayQuiet(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("replayquiet-\(backend)")
        let toggle = FixtureServer.uniqueKey("quiet-toggle")
        // /toggle answers 503 until it is switched on.
        try space.writeJob(
            tasks: #"""
                {"id": "t{n}", "path": "/toggle", "query": {"name": "\#(toggle)", "key": "\#(key)", "n": "{n}"},
                 "foreach": {"n": [1, 2]}}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: backend)
        #expect(first.status == 1, "\(first.stderr)")
        let log = try Self.firstLog(space)
        let arguments = [
            "replay", log, "--job", "job.json", "--log-dir", space.logs.path, "--backend",
            backend, "--quiet", "--no-progress",
        ]

        // Still off: the replay fails, and says which tasks on stderr.
        let failed = try await CourierBinary.run(arguments, directory: space.folder)
        #expect(failed.status == 1, "\(failed.stdout) \(failed.stderr)")
        // One reason for both: the first task's line, and a count of the other.
        #expect(
            failed.stderr.contains("task t1 failed") || failed.stderr.contains("task t2 failed"),
            "\(failed.stderr)")
        #expect(
            failed.stderr.contains("1 more task failed the same way"), "\(failed.stderr)")
        #expect(try await Self.hits(key, space.server).count == 4)

        // On: the replay succeeds and prints nothing at all.
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let quiet = try await CourierBinary.run(arguments, directory: space.folder)
        #expect(quiet.status == 0, "\(quiet.stdout) \(quiet.stderr)")
        #expect(quiet.stdout.isEmpty, "stdout: \(quiet.stdout)")
        #expect(quiet.stderr.isEmpty, "stderr: \(quiet.stderr)")
        #expect(try await Self.hits(key, space.server).count == 6, "both replayed again")
    }
}
