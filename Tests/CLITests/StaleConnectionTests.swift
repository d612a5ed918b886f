import CourierTestSupport
import Foundation
import Testing

/// A server that closes a keep-alive connection just as the client reuses it (the fixture's
/// `/stale`: the second request on any connection is read and dropped unanswered).
///
/// A GET is sent again on a fresh connection by libcurl itself (both transports use it) and
/// the task succeeds with one logged attempt. A POST must not go out twice on a guess, so the
/// curl transport never puts one without an `Idempotency-Key` on a reused connection.
@Suite("a keep-alive connection closed as it is reused")
struct StaleConnectionTests {
    @Test(
        "GETs are resent on a fresh connection; a POST is never sent twice (curl)",
        arguments: ["curl", "urlsession"])
    func staleKeepAlive(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let gets = FixtureServer.uniqueKey("stale-get-\(backend)")
        let posts = FixtureServer.uniqueKey("stale-post-\(backend)")
        let keyed = FixtureServer.uniqueKey("stale-keyed-\(backend)")
        // One at a time, so every request after the first finds a used connection in the
        // pool. URLSession on Linux hangs until the timeout on a POST whose reused connection
        // is closed (docs/transports.md), so its run has GETs only.
        let postTasks = #"""
            ,{"id": "post-{n}", "method": "POST", "path": "/stale",
             "query": {"key": "\#(posts)", "n": "{n}"}, "json": {"n": "{n}"},
             "foreach": {"n": {"range": [1, 3]}}},
            {"id": "keyed-{n}", "method": "POST", "path": "/stale",
             "query": {"key": "\#(keyed)", "n": "{n}"}, "json": {"n": "{n}"},
             "headers": {"Idempotency-Key": "k-{n}"}, "foreach": {"n": {"range": [1, 3]}}}
            """#
        try space.writeJob(
            tasks: #"""
                {"id": "get-{n}", "path": "/stale", "query": {"key": "\#(gets)", "n": "{n}"},
                 "foreach": {"n": {"range": [1, 5]}}}
                """# + (backend == "curl" ? postTasks : ""),
            extra: #""concurrency": 1,"#)
        let total = backend == "curl" ? 11 : 5
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("\(total) tasks, \(total) ok, 0 failed"), "\(result.stdout)")
        let lines = try space.logLines().filter { $0["event"] as? String == "request" }
        #expect(lines.count == total, "one attempt each: the transport's resend is not a retry")
        #expect(lines.allSatisfy { $0["attempt"] as? Int == 1 && $0["outcome"] as? String == "ok" })

        let getArrivals = try await ServerHits.of(gets, on: space.server).count
        #expect(getArrivals > 5, "some GETs met a stale connection and were resent: \(getArrivals)")
        if backend == "curl" {
            let postArrivals = try await ServerHits.of(posts, on: space.server).count
            #expect(postArrivals == 3, "each POST went out once, on a fresh connection")
            // With an Idempotency-Key a POST may be repeated: it reuses connections (and so
            // meets the stale ones, and libcurl resends it).
            let keyedArrivals = try await ServerHits.of(keyed, on: space.server).count
            #expect(keyedArrivals > 3, "keyed POSTs reused connections: \(keyedArrivals)")
        }
    }
}
