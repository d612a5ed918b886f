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
}
