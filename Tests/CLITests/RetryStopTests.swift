import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// When retrying cannot help, or would break what the server asked for, the task stops at once
/// and says why; a task stopped while waiting to retry still gets its final log line.
@Suite("retry stops")
struct RetryStopTests {
    @Test("a Retry-After longer than maxDelay ends the task with the reason")
    func retryAfterBeyondMaxDelay() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("wait")
        try space.writeJob(
            tasks:
                #"{"id": "limited", "path": "/retry-after", "query": {"key": "\#(key)", "seconds": "3600"}}"#,
            extra: #""retry": {"maxAttempts": 3, "maxDelay": 30},"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        // No duration decides it: a run that waited would wait 3600 s (the suite's time limit
        // ends it as a hang), one that retried after maxDelay would reach the server twice.
        #expect(
            result.stderr.contains("the server asked to wait 3600 s, more than maxDelay 30 s"),
            "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
        #expect(try space.attempts("limited").map { $0["outcome"] as? String } == ["failed"])
    }

    @Test("errors that cannot change are not retried", arguments: RunCommandTests.backends)
    func permanentErrorsAreNotRetried(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // A redirect loop, and TLS with a certificate nobody trusts.
        try space.writeJob(
            tasks: #"""
                {"id": "loop", "path": "/loop"},
                {"id": "tls", "url": "\#(space.server.tlsURL("/echo").absoluteString)"}
                """#, extra: #""retry": {"maxAttempts": 4, "initialDelay": 0.01},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1)
        let loop = try space.attempts("loop")
        #expect(loop.count == 1, "\(loop)")
        #expect((loop.first?["error"] as? [String: String])?["kind"] == "tooManyRedirects")
        // `make test` installs openssl, which the fixture needs for its TLS port.
        try #require(
            space.server.tlsPort != 0, "the fixture has no TLS port: is openssl installed?")
        let tls = try space.attempts("tls")
        #expect(tls.count == 1, "\(tls)")
        #expect((tls.first?["error"] as? [String: String])?["kind"] == "tls")
    }

    @Test("a task interrupted while waiting to retry gets a final line and is counted")
    func cancelledDuringBackoff() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("backoff")
        try space.writeJob(
            tasks:
                #"{"id": "waiting", "path": "/flaky", "query": {"key": "\#(key)", "fail": "9"}}"#,
            extra:
                #""retry": {"maxAttempts": 5, "initialDelay": 60, "maxDelay": 60, "jitter": false},"#
        )
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            running, with: SIGINT, afterArrivals: 1, key: key, server: space.server, delay: 0.3)
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 130, "\(output)")
        let lines = try space.logLines()
        LogContract.check(lines)
        let attempts = try space.attempts("waiting")
        #expect(attempts.map { $0["outcome"] as? String } == ["retry", "failed"], "\(attempts)")
        #expect((attempts.last?["error"] as? [String: String])?["kind"] == "cancelled")
        #expect((lines.last?["tasks"] as? [String: Int])?["failed"] == 1, "counted")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
    }
}
