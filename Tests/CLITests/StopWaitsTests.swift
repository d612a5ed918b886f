import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stopping run sends no request that was still waiting: a retry's backoff, a host's pause
/// or a rate limit's token ends at the stop, where a task in a backoff had sent its next
/// attempt in the grace period (trial L) and the stop lasted as long as the longest wait.
@Suite("a stop ends the waits")
struct StopWaitsTests {
    /// Runs the job with an hour's grace and stops it with SIGTERM once the server has the
    /// first request of `key` (and `delay` seconds more); its exit status and output, with a
    /// hang guard of 300 s only (the waits these tests end last 10 minutes or more).
    static func stopped(
        _ space: JobWorkspace, backend: String, key: String,
        environment: [String: String] = [:], delay: Double = 0
    ) async throws -> (status: Int32?, output: String) {
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress", "--grace", "1h",
            ],
            environment: environment, directory: space.folder)
        await SignalTests.signal(
            running, with: SIGTERM, afterArrivals: 1, key: key, server: space.server,
            delay: delay)
        return await running.wait(seconds: 300)
    }
    @Test(
        "a SIGTERM during a 10-minute Retry-After sends no second attempt; the resume sends it",
        arguments: RunCommandTests.backends)
    func sigtermEndsABackoff(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("stop-backoff")
        try space.writeJob(
            tasks: #"""
                {"id": "waits", "path": "/retry-after", "query": {"key": "\#(key)", "times": "1", "seconds": "600"}}
                """#, extra: #""retry": {"maxAttempts": 3, "maxDelay": 900},"#)
        // Once the server has the request, its 429 is on its way: the signal lands while the
        // request is in flight or during the backoff after it, and neither sends again.
        let (status, output) = try await Self.stopped(space, backend: backend, key: key)
        #expect(status == 143, "\(output)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1, "no second attempt")
        let last = try #require(try space.attempts("waits").last)
        #expect((last["error"] as? [String: Any])?["kind"] as? String == "cancelled", "\(last)")

        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2)
    }

    /// The token request a task waits for has its own retries: its backoff ends at the stop
    /// too (it waited out its whole delay in the grace period, then sent again).
    @Test(
        "a SIGTERM during an OAuth2 token request's backoff sends no second token request",
        arguments: RunCommandTests.backends)
    func sigtermEndsATokenBackoff(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("stop-token")
        let toggle = "token-\(key)"
        try space.writeJob(
            tasks: OAuth2JobTests.items(key: key, count: 2),
            extra: OAuth2JobTests.auth(
                key: key, server: space.server, tokenQuery: "&fail_until=\(toggle)")
                + #""retry": {"maxAttempts": 3, "initialDelay": 600, "maxDelay": 900},"#)
        let (status, output) = try await Self.stopped(
            space, backend: backend, key: key, environment: OAuth2JobTests.environment)
        #expect(status == 143, "\(output)")
        // Said in full on a failure: one loaded make test saw a second token request.
        let tokens = try await OAuth2JobTests.tokenRequests(key, space)
        let lines = (try? space.logLines().map { "\($0["event"] ?? "") \($0["task"] ?? "")" }) ?? []
        #expect(tokens.count == 1, "\(tokens.map(\.time)) \(lines) \(output)")
        #expect(try await OAuth2JobTests.apiRequests(key, space).isEmpty)

        _ = BlockingFetch.json(space.server.url("/toggle/on?name=\(toggle)"))
        let resumed = try await space.run(
            ["--resume"], backend: backend, environment: OAuth2JobTests.environment)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try await OAuth2JobTests.apiRequests(key, space).count == 2)
    }

    /// A write that waited for its host when the run stopped never went out: the stop's
    /// summary and the resume held it as a write whose outcome is unknown, and the resume
    /// never sent it (trial O). It is sent as a task that never ran.
    @Test(
        "a write cancelled while it waits for its host is sent by the resume",
        arguments: RunCommandTests.backends)
    func aWriteStoppedInItsWaitIsSentByTheResume(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("stop-write")
        // `spend` leaves the host's quota spent for 10 minutes: the write, one at a time after
        // it, waits at the host's gate until the stop.
        try space.writeJob(
            tasks: #"""
                {"id": "spend", "path": "/quota", "query": {"key": "\#(key)", "limit": "1", "remaining": "1", "window": "600"}},
                {"id": "write", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"x": 1}, "save": "write.json"}
                """#, extra: #""concurrency": 1, "retry": {"maxAttempts": 2, "maxDelay": 900},"#)
        // A moment after the quota's answer, for the write to reach the gate (sooner, it is
        // stopped before it starts, and the resume sends it all the same).
        let (status, output) = try await Self.stopped(
            space, backend: backend, key: key, delay: 0.5)
        #expect(status == 143, "\(output)")
        #expect(!output.contains("will not send again"), "\(output)")
        #expect(output.contains("1 request in"), "the write is no request sent: \(output)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1, "no POST went out")

        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let posts = try await ServerHits.of(key, on: space.server).requests.filter {
            $0.method == "POST"
        }
        #expect(posts.count == 1, "the write went out once")
    }

    /// A request waiting for a rate-limit token at the stop is not sent; its line says what
    /// it waited, and the run counts no request for it (trial O: `blockedMs` was null, and
    /// the request counted).
    @Test(
        "a SIGTERM while a request waits for a rate-limit token: not sent, its wait logged",
        arguments: RunCommandTests.backends)
    func sigtermEndsARateLimitWait(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("stop-rate")
        // A token every 100 s: the second request waits for its turn until the stop.
        try space.writeJob(
            tasks: #"""
                {"id": "r{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 2]}}}
                """#, extra: #""concurrency": 2, "rateLimit": {"perSecond": 0.01, "burst": 1},"#)
        let (status, output) = try await Self.stopped(space, backend: backend, key: key)
        #expect(status == 143, "\(output)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
        let lines = try space.logLines()
        let waited = try #require(
            lines.first {
                ($0["error"] as? [String: Any])?["message"] as? String
                    == "cancelled while waiting for the rate limit"
            }, "\(lines)")
        #expect((waited["blockedMs"] as? Double ?? 0) > 0, "\(waited)")
        #expect(lines.last?["requests"] as? Int == 1, "\(String(describing: lines.last))")
    }
}
