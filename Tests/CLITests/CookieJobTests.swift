import CourierTestSupport
import Foundation
import Testing

/// `"cookies": true` keeps one cookie jar for the run.
@Suite("job cookies")
struct CookieJobTests {
    @Test("a cookie set by one task is sent by the next", arguments: RunCommandTests.backends)
    func cookiesAcrossTasks(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("jar")
        let tasks = #"""
            {"id": "login", "path": "/set-cookie", "query": {"c": "session=s1; HttpOnly"}},
            {"id": "fetch", "path": "/echo", "query": {"key": "\#(key)"}}
            """#
        try space.writeJob(tasks: tasks, extra: #""concurrency": 1, "cookies": true,"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        try space.writeJob(tasks: tasks, extra: #""concurrency": 1,"#)
        #expect(try await space.run(backend: backend).status == 0)
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.map { $0.header("Cookie") } == ["session=s1", nil], "only with the jar on")
        let logged = try space.attempts("fetch").map {
            ($0["requestHeaders"] as? [String: String])?["Cookie"]
        }
        #expect(logged.sorted { ($0 ?? "") < ($1 ?? "") } == [nil, "<redacted>"], "logged as sent")
    }

    @Test("cookies must be true or false")
    func badCookiesValue() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#, extra: #""cookies": "yes","#)
        let result = try await space.run(["--dry-run"], backend: "curl")
        #expect(result.status == 2)
        #expect(result.stderr.contains("cookies: expected true or false"), "\(result.stderr)")
    }
}
