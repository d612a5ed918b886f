import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM and SIGINT stop a run cleanly: no new tasks, in-flight ones finished or cancelled
/// after the grace period (`--grace`, 5 s by default), and a complete log ending in `run.end`.
/// No test measures a time: each grace period is either far longer than the requests it lets
/// finish or far shorter than the request it must cut, and the waits are hang guards.
@Suite("signals", .serialized)
struct SignalTests {
    /// Sends `signal` to `running` once the server has received `count` requests of `key`
    /// (and `delay` seconds more), waiting at most 300 s (a hang guard).
    ///
    /// The waiting and the signal happen on a thread of their own, with blocking calls: on a
    /// loaded 2-core machine the cooperative pool can be busy for seconds with other tests,
    /// and a signal that waited for it would land after the run it was meant to interrupt.
    static func signal(
        _ running: CourierBinary.Running, with signal: Int32, afterArrivals count: Int,
        key: String, server: FixtureServer, delay: Double = 0
    ) async {
        let url = server.url("/hits?key=\(key)")
        let arrived = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(300)
                while Date() < deadline {
                    if let hits = BlockingFetch.json(url)?["count"] as? Int, hits >= count {
                        Thread.sleep(forTimeInterval: delay)
                        running.send(signal)
                        continuation.resume(returning: true)
                        return
                    }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                continuation.resume(returning: false)
            }
        }
        if !arrived { Issue.record("requests never reached the server") }
    }

    @Test func sigtermFinishesInFlightRequestsAndWritesRunEnd() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("term")
        // 40 one-second tasks, two at a time: the signal lands mid-run however loaded the
        // machine is.
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "1000", "key": "\#(key)"}, "foreach": {"n": {"range": [1, 40]}}}"#,
            extra: #""concurrency": 2,"#)
        // An hour's grace: the requests in flight finish however slow the machine is.
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--grace", "1h"],
            directory: space.folder)
        await Self.signal(running, with: SIGTERM, afterArrivals: 2, key: key, server: space.server)
        let (status, output) = await running.wait(seconds: 120)
        #expect(status == 143, "\(output)")
        #expect(output.contains("interrupted by SIGTERM"))
        let lines = try space.logLines()
        LogContract.check(lines)
        let end = try #require(lines.last)
        #expect(end["interrupted"] as? Bool == true)
        #expect(end["exitCode"] as? Int == 143)
        let requests = lines.filter { $0["event"] as? String == "request" }
        let arrived = try await ServerHits.of(key, on: space.server).count
        #expect(requests.count >= 2 && requests.count < 40, "scheduling stopped")
        #expect(requests.count == arrived, "every request that reached the server has its line")
        #expect(
            requests.allSatisfy { $0["outcome"] as? String == "ok" }, "in-flight requests finished")
        #expect((end["tasks"] as? [String: Int])?["ok"] == requests.count)
    }

    @Test func sigintCancelsWhatOutlastsTheGracePeriod() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("int")
        // The request lasts ten minutes; the grace period is 1 s. A run that waited for the
        // request would run into the wait's hang guard (300 s) and be killed: no status.
        try space.writeJob(
            tasks:
                #"{"id": "forever", "path": "/slow", "query": {"ms": "600000", "key": "\#(key)"}, "timeout": 900}"#
        )
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--grace", "1s"],
            directory: space.folder)
        await Self.signal(running, with: SIGINT, afterArrivals: 1, key: key, server: space.server)
        let (status, output) = await running.wait(seconds: 120)
        #expect(status == 130, "\(output)")
        let lines = try space.logLines()
        LogContract.check(lines)
        let attempt = try #require(try space.attempts("forever").first)
        #expect(attempt["outcome"] as? String == "failed")
        #expect((attempt["error"] as? [String: String])?["kind"] == "cancelled")
        #expect(lines.last?["interrupted"] as? Bool == true)
    }

    @Test func aSecondSigintCancelsAtOnce() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("int-twice")
        // A grace period of an hour and a request of ten minutes: only the second signal can
        // end the run before the wait's hang guard (300 s) kills it.
        try space.writeJob(
            tasks:
                #"{"id": "forever", "path": "/slow", "query": {"ms": "600000", "key": "\#(key)"}, "timeout": 900}"#
        )
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--grace", "1h"],
            directory: space.folder)
        await Self.signal(
            running, with: SIGINT, afterArrivals: 1, key: key, server: space.server)
        // The impatient second Ctrl-C, once the first has been taken: the run says so on
        // stderr. (A second signal before the first was handled would be the first.)
        try await running.waitForStandardError(
            containing: "SIGINT: no new task starts", seconds: 120)
        running.send(SIGINT)
        let (status, output) = await running.wait(seconds: 120)
        #expect(status == 130, "\(output)")
        let lines = try space.logLines()
        LogContract.check(lines)
        let attempt = try #require(try space.attempts("forever").first)
        #expect((attempt["error"] as? [String: String])?["kind"] == "cancelled")
        #expect(lines.last?["interrupted"] as? Bool == true)
    }
}
