import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stopping run starts no further page of a paginated task, as it starts no further task:
/// the page under way finishes in the grace period, the task ends there unfinished, and
/// `--resume` goes on from the page after it, ending byte for byte as a clean run.
@Suite("a stop between pages")
struct StopBetweenPagesTests {
    @Test(
        "a SIGTERM during page 5 of 8 asks for no page 6, and the resume goes on from page 6",
        arguments: RunCommandTests.backends)
    func sigtermStopsAtThePageBoundary(backend: String) async throws {
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let cleanKey = FixtureServer.uniqueKey("pages-clean")
        try await ListingResumeTests.fill(clean, key: cleanKey)
        try ListingResumeTests.writeJob(clean, key: cleanKey, fault: "")
        let cleanRun = try await clean.run(backend: backend)
        #expect(cleanRun.status == 0, "\(cleanRun.stderr)")

        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("pages-term")
        try await ListingResumeTests.fill(space, key: key)
        let toggle = FixtureServer.uniqueKey("pages-toggle")
        try ListingResumeTests.writeJob(
            space, key: key, fault: #", "hang_page": "5", "hang_until": "\#(toggle)""#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress", "--grace", "1h",
            ],
            directory: space.folder)
        // Six arrivals: the records put in, then pages 1 to 5 (held by the server).
        await SignalTests.signal(
            running, with: SIGTERM, afterArrivals: 6, key: key, server: space.server)
        try await running.waitForStandardError(
            containing: "SIGTERM: no new task starts", seconds: 120)
        // Page 5 answers now, inside the grace period.
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 143, "\(output)")
        #expect(
            ListingResumeTests.pagesAsked(space, key: key) == [1, 2, 3, 4, 5],
            "no page after the signal's: \(output)")
        #expect(output.contains("1 not run"), "\(output)")
        // The five pages sent count as requests though the task is not done (they read 0).
        #expect(output.contains("5 requests"), "\(output)")
        let end = try #require(try space.logLines().last { $0["event"] as? String == "run.end" })
        #expect(end["requests"] as? Int == 5, "\(end)")
        #expect(output.contains("to repair: courier run"), "\(output)")
        let last = try #require(try space.attempts("sync").last)
        #expect(last["outcome"] as? String == "page", "page 5's line is the task's last: \(last)")

        let repaired = try await space.run(["--resume"], backend: backend)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(
            repaired.stderr.contains(
                "courier: e2e: task sync goes on from page 6: pages 1-5 were kept by run"),
            "\(repaired.stderr)")
        #expect(
            ListingResumeTests.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 6, 7, 8],
            "no page is asked for twice")
        let differences = RecoveryMatrixTests.differences(
            ListingResumeTests.outputs(space), ListingResumeTests.outputs(clean))
        #expect(differences.isEmpty, "outputs differ from the clean run's: \(differences)")
        #expect(ListingResumeTests.leftovers(space) == [], "no listing file, temporary or part")
    }

    /// The same stop where users combine it: paginated children of a capture fan-out, with a
    /// bearer token, each held on its page 5 when the signal comes.
    static func writeFanOutJob(_ space: JobWorkspace, key: String, fault: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "groups", "path": "/store/items", "query": {"key": "\#(key)-groups", "size": "10"},
                 "capture": {"groups": {"json": "/items/*/name"}}},
                {"id": "sync-{g}", "path": "/store/items",
                 "query": {"key": "\#(key)-{g}", "size": "2", "since": "{since}"\#(fault)},
                 "foreach": {"g": {"capture": "groups"}},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                 "save": "pages/{g}/{page}.json"}
                """#,
            extra:
                #""auth": {"bearer": "${env:COURIER_TEST_TOKEN}"}, "retry": {"maxAttempts": 1}, "timeout": 600,"#
        )
    }

    /// Two groups, `a` and `b`, of 16 records each (8 pages of 2).
    static func fillGroups(_ space: JobWorkspace, key: String) async throws {
        var components = URLComponents(
            url: space.server.url("/store/put"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "key", value: "\(key)-groups")]
        try await ProbeClient().post(
            components.url!,
            json: Data(
                #"[{"id": 1, "name": "a", "updated_at": "1"}, {"id": 2, "name": "b", "updated_at": "2"}]"#
                    .utf8))
        for group in ["a", "b"] {
            try await ListingResumeTests.fill(space, key: "\(key)-\(group)")
        }
    }

    @Test(
        "fan-out children with a bearer token stop at their page boundary and resume as a clean run",
        arguments: RunCommandTests.backends)
    func fanOutWithAuth(backend: String) async throws {
        let token = "tok-\(UUID().uuidString)"
        let environment = ["COURIER_TEST_TOKEN": token]
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let cleanKey = FixtureServer.uniqueKey("fan-clean")
        try await Self.fillGroups(clean, key: cleanKey)
        try Self.writeFanOutJob(clean, key: cleanKey, fault: "")
        let cleanRun = try await clean.run(backend: backend, environment: environment)
        #expect(cleanRun.status == 0, "\(cleanRun.stderr)")

        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("fan-term")
        try await Self.fillGroups(space, key: key)
        let toggle = FixtureServer.uniqueKey("fan-toggle")
        try Self.writeFanOutJob(
            space, key: key, fault: #", "hang_page": "5", "hang_until": "\#(toggle)""#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress", "--grace", "1h",
            ],
            environment: environment, directory: space.folder)
        // Both children held on page 5 (the records put in, then pages 1 to 5 each): signal 0
        // only waits for group b; the SIGTERM follows group a's page 5.
        await SignalTests.signal(
            running, with: 0, afterArrivals: 6, key: "\(key)-b", server: space.server)
        await SignalTests.signal(
            running, with: SIGTERM, afterArrivals: 6, key: "\(key)-a", server: space.server)
        try await running.waitForStandardError(
            containing: "SIGTERM: no new task starts", seconds: 120)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 143, "\(output)")
        for group in ["a", "b"] {
            #expect(
                ListingResumeTests.pagesAsked(space, key: "\(key)-\(group)") == [1, 2, 3, 4, 5],
                "group \(group): no page after the signal's: \(output)")
        }
        #expect(output.contains("2 not run"), "\(output)")
        // The listing's request and each child's five pages.
        #expect(output.contains("11 requests"), "\(output)")

        let repaired = try await space.run(["--resume"], backend: backend, environment: environment)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        for group in ["a", "b"] {
            #expect(
                ListingResumeTests.pagesAsked(space, key: "\(key)-\(group)")
                    == [1, 2, 3, 4, 5, 6, 7, 8],
                "group \(group): no page is asked for twice")
            let hits = try await ServerHits.of("\(key)-\(group)", on: space.server).requests
            let pages = hits.filter { $0.path.hasPrefix("/store/items") }
            #expect(
                pages.allSatisfy { $0.header("Authorization") == "Bearer \(token)" },
                "group \(group): every page, resumed ones too, carries the token")
        }
        let differences = RecoveryMatrixTests.differences(
            ListingResumeTests.outputs(space), ListingResumeTests.outputs(clean))
        #expect(differences.isEmpty, "outputs differ from the clean run's: \(differences)")
        #expect(ListingResumeTests.leftovers(space) == [], "no listing file, temporary or part")
        let written = try space.everyWrittenByte()
        #expect(written.range(of: Data(token.utf8)) == nil, "the token is in no file")
    }
}
