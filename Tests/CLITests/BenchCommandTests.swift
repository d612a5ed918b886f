import CourierTestSupport
import Foundation
import Testing

/// The JSON objects of `--json` output, one per line.
func jsonLines(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

@Suite("courier bench")
struct BenchCommandTests {
    @Test func measuresEachBackendAndReportsJSON() async throws {
        let server = try TestServers.fixture()
        let result = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "--backend", "curl,urlsession",
            "-n", "60", "-c", "6", "--warmup", "6", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = jsonLines(result.stdout)
        #expect(lines.map { $0["backend"] as? String } == ["curl", "urlsession"])
        for line in lines {
            // Totals over the three measured rounds, as errors and seconds are.
            #expect(line["requests"] as? Int == 180)
            #expect(line["roundsRequests"] as? [Int] == [60, 60, 60])
            #expect(line["errors"] as? Int == 0)
            #expect(line["non2xx"] as? Int == 0)
            #expect((line["requestsPerSecond"] as? Double ?? 0) > 0)
        }
    }

    @Test func refusesBadArguments() async throws {
        let badBackend = try await CourierBinary.run([
            "bench", "http://127.0.0.1:1/", "--backend", "telnet",
        ])
        #expect(badBackend.status == 2)
        #expect(badBackend.stderr.contains("unknown backend 'telnet'"))
        let badURL = try await CourierBinary.run(["bench", "ftp://x/"])
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("is not an http or https URL"))
        let zero = try await CourierBinary.run(["bench", "http://127.0.0.1:1/", "-n", "0"])
        #expect(zero.status == 2)
        // Trial K: each of these was taken and ran (or measured nothing) without a word.
        let refused: [(arguments: [String], says: String)] = [
            (["--backend", ""], "unknown backend ''"),
            (["--backend", "curl,curl"], "names curl twice"),
            (["--backend", "curl,"], "unknown backend ''"),
            (["-n", "5", "-d", "3"], "not both"),
            (["--timeout", "0"], "--timeout expects seconds"),
        ]
        for (arguments, says) in refused {
            let result = try await CourierBinary.run(
                ["bench", "http://127.0.0.1:1/"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
        let port = try await CourierBinary.run(["bench", "http://127.0.0.1:99999/"])
        #expect(port.status == 2)
        #expect(port.stderr.contains("from 1 to 65535"), "\(port.stderr)")
    }

    /// The request deadline was a hidden 60 s with no flag: a slow answer could not be
    /// counted as the timeout a user's own client would give up at.
    @Test("--timeout is each request's deadline; one that passes it counts as a timeout")
    func timeout() async throws {
        let server = try TestServers.fixture()
        let result = try await CourierBinary.run([
            "bench", server.url("/slow?ms=5000").absoluteString, "--timeout", "0.3", "-n", "2",
            "-c", "2", "--warmup", "0", "--rounds", "1", "--json",
        ])
        #expect(result.status == 1, "every request failed: \(result.stderr)")
        let line = try #require(jsonLines(result.stdout).first)
        #expect(line["errorsByKind"] as? [String: Int] == ["timeout": 2], "\(line)")
    }

    /// The warning and the errors column name statuses and kinds with their counts apart:
    /// "every answer had an error status (500 non-2xx)" read as a status 500 (trial CCC).
    @Test("every answer an error status: the warning names the status and its count")
    func errorStatusesNamed() async throws {
        let server = try TestServers.fixture()
        let result = try await CourierBinary.run([
            "bench", server.url("/status/404").absoluteString, "-n", "3", "-c", "1",
            "--warmup", "0", "--rounds", "1",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("every answer had an error status (status 404 ×3)"),
            "\(result.stderr)")
        let closed = try await CourierBinary.run([
            "bench", "http://127.0.0.1:\(unusedLoopbackPort())/x", "-n", "2", "--rounds", "1",
            "--warmup", "0",
        ])
        #expect(closed.stdout.contains("connect ×2"), "\(closed.stdout)")
    }

    /// At a fixed rate every backend sends as many a second: the last column compares CPU a
    /// request (it read 1.00 always); `--http2` without curl is said to do nothing.
    @Test("--rate compares CPU a request; --http2 without the curl backend is warned of")
    func pacedComparison() async throws {
        let server = try TestServers.fixture()
        let result = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "--rate", "50", "-n", "3",
            "--warmup", "0", "--rounds", "2", "--backend", "curl,urlsession", "--http2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("cpu vs curl"), "\(result.stdout)")
        #expect(!result.stderr.contains("--http2 is the curl backend's"), "\(result.stderr)")
        let alone = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "-n", "2", "--warmup", "0",
            "--rounds", "1", "--backend", "urlsession", "--http2",
        ])
        #expect(alone.stderr.contains("--http2 is the curl backend's"), "\(alone.stderr)")
    }
}

@Suite("courier bench: modes and options")
struct BenchModesTests {
    @Test("method, headers and body reach the server; rounds alternate")
    func requestOptions() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchopts")
        let result = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(key)").absoluteString, "--backend",
            "curl,urlsession", "-n", "5", "-c", "2", "--warmup", "0", "--rounds", "2",
            "--method", "post", "-H", "X-Bench: 1", "--body", "abc", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try await ServerHits.of(key, on: server).requests
        #expect(hits.count == 20, "2 backends × 2 rounds × 5")
        #expect(
            hits.allSatisfy {
                $0.method == "POST" && $0.body == "abc" && $0.header("X-Bench") == "1"
            })
        let lines = jsonLines(result.stdout)
        #expect(lines.count == 2)
        for line in lines {
            #expect(line["rounds"] as? Int == 2)
            #expect((line["roundsRequestsPerSecond"] as? [Double])?.count == 2)
            let latency = try #require(line["latencyMs"] as? [String: Double])
            #expect((latency["p50"] ?? 0) > 0 && (latency["max"] ?? 0) >= (latency["p99"] ?? 0))
            #expect(line["errorsByKind"] as? [String: Int] == [:])
            #expect((line["peakRSSBytes"] as? Int ?? 0) > 0)
        }
    }

    @Test("the curl backend counts the connections the server saw; URLSession says it cannot tell")
    func connections() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchconns")
        let curl = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(key)").absoluteString, "-n", "12", "-c", "3",
            "--warmup", "6", "--rounds", "2", "--json",
        ])
        #expect(curl.status == 0, "\(curl.stderr)")
        let line = try #require(
            JSONSerialization.jsonObject(with: Data(curl.stdout.utf8)) as? [String: Any])
        let ports = Set(try await ServerHits.of(key, on: server).requests.map(\.peerPort))
        #expect(ports.count >= 1 && ports.count <= 3)
        #expect(line["connections"] as? Int == ports.count, "\(line)")
        let urlSession = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "--backend", "urlsession", "-n", "2",
            "--rounds", "1", "--json",
        ])
        #expect(urlSession.stdout.contains(#""connections":null"#), "\(urlSession.stdout)")
        let table = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "--backend", "curl,urlsession", "-n", "2",
            "--rounds", "1",
        ])
        #expect(table.stdout.contains("conns") && table.stdout.contains("n/a"), "\(table.stdout)")
        // The table says what it measured (trial S: neither the count nor the concurrency).
        #expect(
            table.stdout.hasPrefix(
                "courier bench: 1 round of 2 requests a backend, 64 in flight, after a warm-up of 2 requests each\n"
            ), "\(table.stdout)")
        // Every request refused: curl opened no connection, and says 0 (it said null).
        let refused = try await CourierBinary.run([
            "bench", "http://127.0.0.1:\(unusedLoopbackPort())/", "-n", "2", "--warmup", "0",
            "--rounds", "1", "--json",
        ])
        #expect(refused.stdout.contains(#""connections":0"#), "\(refused.stdout)")
        #expect(refused.stdout.contains(#""connect":2"#), "\(refused.stdout)")
    }

    @Test("job mode sends the job's requests on each backend; errors are counted by kind")
    func jobMode() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("benchjob")
        try space.writeJob(
            tasks: #"""
                {"id": "e{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": [1, 2, 3]}, "save": "e{n}.json"},
                {"id": "down", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/x"}
                """#)
        let result = try await CourierBinary.run(
            [
                "bench", "job.json", "--backend", "curl,urlsession", "-n", "8", "--rounds", "1",
                "--warmup", "0", "--json",
            ], directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = jsonLines(result.stdout)
        #expect(lines.map { $0["backend"] as? String } == ["curl", "urlsession"])
        for line in lines {
            // Tasks in turn: e1 e2 e3 down e1 e2 e3 down: two of eight to a closed port.
            #expect(line["errorsByKind"] as? [String: Int] == ["connect": 2], "\(line)")
        }
        // Figures that count failures are said to (trial PPP: half refused looked faster).
        for backend in ["curl", "urlsession"] {
            #expect(
                result.stderr.contains(
                    "warning: \(backend): 2 of 8 requests failed (25.0 %: connect ×2)"),
                "\(result.stderr)")
        }
        #expect(try await ServerHits.of(key, on: space.server).count == 12)
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out").path), "no saving")
    }

    /// A trial saw `Bearer {token}` sent as written (the figures were of 401s), and a closed
    /// port "rank" the backends with exit 0.
    @Test("job mode leaves out tasks that take captures; every request failing is exit 1")
    func jobModeCapturesAndFailures() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("benchcap")
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/json", "query": {"v": "{{\"token\": \"abcdef\"}}"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "use", "path": "/echo", "query": {"key": "\#(key)"}, "auth": {"bearer": "{token}"}}
                """#)
        let result = try await CourierBinary.run(
            [
                "bench", "job.json", "--backend", "curl", "-n", "4", "--rounds", "1", "--warmup",
                "0",
            ],
            directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("task use takes captured values"), "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing of {token}")

        let closed = try await CourierBinary.run([
            "bench", "http://127.0.0.1:\(unusedLoopbackPort())/x", "--backend", "curl,urlsession",
            "-n", "5", "--rounds", "1", "--warmup", "0",
        ])
        #expect(closed.status == 1, "\(closed.stdout) \(closed.stderr)")
        #expect(closed.stderr.contains("curl: every request failed"), "\(closed.stderr)")
        #expect(closed.stderr.contains("urlsession: every request failed"), "\(closed.stderr)")
    }

    @Test(
        "the curl backend runs one loop per core by default (at most four), --event-loops sets it; the loops share the connection limit",
        arguments: [nil, 2])
    func eventLoops(asked: Int?) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchloops")
        let result = try await CourierBinary.run(
            [
                // Slow enough that all eight are in flight at once even on a loaded machine
                // (150 ms was not, with both cores busy and the tests at a lower priority).
                "bench", server.url("/slow?ms=3000&key=\(key)").absoluteString, "-n", "16", "-c",
                "8", "--warmup", "0", "--rounds", "1", "--json",
            ] + (asked.map { ["--event-loops", "\($0)"] } ?? []))
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(jsonLines(result.stdout).first)
        #expect(line["requests"] as? Int == 16 && line["errors"] as? Int == 0, "\(line)")
        let expected = asked ?? min(4, ProcessInfo.processInfo.activeProcessorCount)
        #expect(line["eventLoops"] as? Int == expected, "\(line)")
        let ports = Set(try await ServerHits.of(key, on: server).requests.map(\.peerPort))
        #expect(ports.count <= 8, "the loops share eight connections: \(ports.count)")
        #expect(try await server.maxConcurrency(of: key) == 8)
    }

    @Test("--rate spaces the requests at the server")
    func fixedRate() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchrate")
        let launched = Date().timeIntervalSince1970
        let result = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(key)").absoluteString, "-n", "21", "-c", "4",
            "--warmup", "0", "--rounds", "1", "--rate", "5", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let times = try await ServerHits.of(key, on: server).requests.map(\.time).sorted()
        #expect(times.count == 21)
        guard times.count == 21 else { return }
        // Twenty-one requests at 5/s: the i-th is due i/5 s after the bench starts, so never
        // sooner than that after launch. Lower bounds only: a slow machine makes every one
        // later, and a sender that stalls sends what fell due at once (latency is counted from
        // the due time), so the gaps between arrivals prove nothing. Sent at once, the last
        // would come 4 s too soon.
        for (index, time) in times.enumerated() {
            #expect(
                time - launched >= Double(index) / 5 - 0.01,
                "request \(index) came \(time - launched) s after launch, due \(Double(index) / 5)")
        }
    }

    @Test("--rate with -d sends nothing due after the end; its warm-up keeps the rate")
    func fixedRateForADuration() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("benchrate-d")
        let result = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(key)").absoluteString, "-d", "1", "-c", "8",
            "--warmup", "0", "--rounds", "1", "--rate", "10", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // Due at 0, 0.1 … 0.9 s: ten at most, however slow the machine (trial OO: each sender
        // sent one more after the end, 84 for 2 s at 10/s with 64 senders).
        let count = try await ServerHits.of(key, on: server).count
        #expect(count <= 10, "\(count) requests")

        // The default warm-up with --rate: one second's worth (here all 3), at the rate.
        let warm = FixtureServer.uniqueKey("benchrate-warm")
        let launched = Date().timeIntervalSince1970
        let paced = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(warm)").absoluteString, "-n", "3", "-c", "4",
            "--rounds", "1", "--rate", "5", "--json",
        ])
        #expect(paced.status == 0, "\(paced.stderr)")
        // Said as it is (trial QQ: "after a warm-up of 1000 requests" for a warm-up of 20).
        let heading = try await CourierBinary.run([
            "bench", server.url("/echo?key=\(warm)-h").absoluteString, "-n", "3", "-c", "4",
            "--rounds", "1", "--rate", "5",
        ])
        #expect(
            (heading.stdout + heading.stderr).contains("after a warm-up of 3 requests each"),
            "\(heading.stdout)\(heading.stderr)")
        let times = try await ServerHits.of(warm, on: server).requests.map(\.time).sorted()
        #expect(times.count == 6, "3 to warm up, 3 measured")
        for (index, time) in times.prefix(3).enumerated() {
            #expect(
                time - launched >= Double(index) / 5 - 0.01,
                "warm-up request \(index) came \(time - launched) s after launch")
        }
    }

    @Test("bad options exit 2")
    func badOptions() async throws {
        for (arguments, message) in [
            (["-d", "0"], "-d expects"), (["--rate", "0"], "--rate expects"),
            (["--method", "BAD METHOD"], "--method expects"), (["-H", "nocolon"], "-H expects"),
            (["--rounds", "0"], "--rounds expects"),
            (["--event-loops", "0"], "--event-loops expects"),
        ] {
            let result = try await CourierBinary.run(["bench", "http://127.0.0.1:1/"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }
}

@Suite("courier bench over TLS")
struct BenchTLSTests {
    @Test("--insecure reaches a server with a throwaway certificate; without it, tls errors")
    func insecure() async throws {
        let server = try TestServers.fixture()
        try #require(server.tlsPort != 0, "the fixture server has a TLS port (openssl)")
        let url = server.tlsURL("/echo").absoluteString
        let checked = try await CourierBinary.run([
            "bench", url, "-n", "4", "-c", "2", "--warmup", "0", "--rounds", "1", "--json",
        ])
        #expect(checked.stdout.contains(#""errorsByKind":{"tls":4}"#), "\(checked.stdout)")
        let insecure = try await CourierBinary.run([
            "bench", url, "-n", "4", "-c", "2", "--warmup", "0", "--rounds", "1", "--insecure",
            "--http2", "--json",
        ])
        #expect(insecure.stdout.contains(#""errors":0"#), "\(insecure.stdout)")
    }
}
