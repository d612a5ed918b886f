import CourierTestSupport
import Foundation
import Testing

/// A POST that reads (a search, a GraphQL query: `"safe": true`, or paged) is no write: its
/// request lines say `safe`, so that a replay of the log alone sends its failed page again, as
/// `--resume` and `replay --job` do (trial FF: it held the page, "answered 200" by the pages
/// before it).
@Suite("safe POSTs replayed from the log")
struct SafePostReplayTests {
    @Test(
        "replay LOG sends the failed page of a safe paginated POST again, and so does a replay of that replay",
        arguments: [#", "safe": true"#, ""])
    func failedPageOfASafePost(safe: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("safe-post")
        let toggle = "\(key)-pages"
        try space.writeJob(
            name: "search",
            tasks: #"""
                {"id": "search", "method": "POST", "path": "/pages", "json": {"q": "all"},
                 "query": {"style": "link", "total": "9", "size": "3", "key": "\#(key)", "fail_start": "3", "fail_until": "\#(toggle)"},
                 "paginate": {"next": {"linkHeader": "next"}}\#(safe)}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "page 2 failed: \(night.stdout)\(night.stderr)")
        let lines = try space.logLines(job: "search").filter {
            $0["event"] as? String == "request"
        }
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0["safe"] as? Bool == true }, "\(lines)")
        _ = BlockingFetch.json(space.server.url("/toggle/on?name=\(toggle)"))

        let folder = space.logs.appendingPathComponent("search")
        let night1 = try #require(try Self.logs(in: folder).first)
        let replay = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(night1).path, "--no-progress"],
            directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(!replay.stderr.contains("not sent"), "\(replay.stderr)")
        let sent = try await ServerHits.of(key, on: space.server).requests
        #expect(
            sent.filter { $0.path.hasSuffix("&start=3") }.count == 2,
            "the failed page again: \(sent.map(\.path))")
        #expect(sent.allSatisfy { $0.method == "POST" })

        // The replay's own lines say `safe` too: its log replayed is not held either.
        let replayLog = try #require(try Self.logs(in: folder).first { $0 != night1 })
        let again = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(replayLog).path, "--all", "--no-progress"],
            directory: space.folder)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(!again.stderr.contains("not sent"), "\(again.stderr)")
    }

    /// The job's log files, oldest first (their names start with the run's time).
    static func logs(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix(".jsonl")
        }.sorted()
    }
}
