import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier run --resume` after a run killed with SIGKILL.
@Suite("courier run --resume")
struct ResumeTests {
    @Test("after kill -9, --resume finishes the job and sends no ok task again")
    func resumeAfterKill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("resume")
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "100", "key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 150]}}}"#,
            extra: #""concurrency": 3,"#)
        // 150 tasks of 100 ms, 3 at a time: 5 s, so the kill lands mid-run on a loaded machine.
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        try await SignalTests.waitForArrivals(15, key: key, server: space.server)
        running.send(SIGKILL)
        _ = await running.wait(seconds: 20)

        let firstOK = Set(
            try space.logLines().filter { $0["outcome"] as? String == "ok" }
                .compactMap { $0["task"] as? String })
        #expect(firstOK.count >= 10 && firstOK.count < 150, "killed mid-way: \(firstOK.count) ok")

        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("done by earlier runs"), "\(resumed.stdout)")
        let lines = try space.logLines()
        let okLines = lines.filter { $0["outcome"] as? String == "ok" }.compactMap {
            $0["task"] as? String
        }
        #expect(okLines.count == 150, "every task ended ok exactly once across both logs")
        #expect(Set(okLines).count == 150)
        let start = try #require(lines.last { $0["event"] as? String == "run.start" })
        #expect((start["resumedFrom"] as? [String])?.count == 1)
        let end = try #require(lines.last)
        #expect((end["tasks"] as? [String: Int])?["alreadyDone"] == firstOK.count)

        // No ok task was sent again: each ok task of the first run reached the server once.
        let hits = try await ServerHits.of(key, on: space.server).requests
        for task in firstOK {
            let n = task.dropFirst()
            #expect(hits.filter { $0.path.hasSuffix("&n=\(n)") }.count == 1, "\(task)")
        }

        // Resuming a finished job sends nothing.
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.status == 0)
        #expect(again.stdout.contains("0 requests"), "\(again.stdout)")
    }
}
