import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A kill -9 mid-save leaves `.name.TAG.XXXXXXXX.tmp` beside the output (TAG: the job's); the
/// next run of the same job removes it at once, another job's temporary once it is an hour
/// old, and touches nothing else.
@Suite("stale temporary files")
struct StaleTemporaryTests {
    @Test("an hour-old temporary goes; a fresh one, other names, links and other folders stay")
    func sweep() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let out = space.folder.appendingPathComponent("out")
        let other = out.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let twoHoursAgo = Date().addingTimeInterval(-7200)
        func make(_ url: URL, old: Bool) throws {
            try Data("partial".utf8).write(to: url)
            if old {
                try FileManager.default.setAttributes(
                    [.modificationDate: twoHoursAgo], ofItemAtPath: url.path)
            }
        }
        let stale = out.appendingPathComponent(".a.json.DEADBEEF.tmp")
        let fresh = out.appendingPathComponent(".a.json.CAFEBABE.tmp")  // another run's, now
        let notOurs = out.appendingPathComponent(".notes.tmp")
        let elsewhere = other.appendingPathComponent(".c.json.0123ABCD.tmp")
        try make(stale, old: true)
        try make(fresh, old: false)
        try make(notOurs, old: true)
        try make(elsewhere, old: true)
        let link = out.appendingPathComponent(".b.json.AAAAAAAA.tmp")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)

        try space.writeJob(
            tasks: #"{"id": "a", "path": "/bytes", "query": {"n": "10"}, "save": "a.json"}"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stale.path), "the stale one is gone")
        #expect(result.stderr.contains(".a.json.DEADBEEF.tmp, left by an interrupted run"))
        for kept in [fresh, notOurs, elsewhere] {
            #expect(FileManager.default.fileExists(atPath: kept.path), "\(kept.lastPathComponent)")
        }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil)
        #expect(try Data(contentsOf: out.appendingPathComponent("a.json")).count == 10)
    }

    @Test(
        "a killed run's temporaries go at once on the job's next run; other jobs' fresh ones stay")
    func ownLeftoversGoAtOnce() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let gate = FixtureServer.uniqueKey("gate")
        let key = FixtureServer.uniqueKey("tagged")
        // The gate sends its head and a first chunk, then waits: the body is being saved.
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/gate", "query": {"name": "\#(gate)"}, "save": "a.json"},
                {"id": "e", "path": "/etag", "query": {"v": "1", "key": "\#(key)"},
                 "conditional": true, "save": "e.json"}
                """#)
        let out = space.folder.appendingPathComponent("out")
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        // Watched and killed from a thread of its own: a loaded test run starves the
        // cooperative pool for seconds, and the gate gives up after ten.
        let leftover: String? = await HostileValueTests.onThread {
            let deadline = Date().addingTimeInterval(300)
            var name: String?
            while name == nil, Date() < deadline {
                name = (try? FileManager.default.contentsOfDirectory(atPath: out.path))?.first {
                    $0.hasPrefix(".a.json.") && $0.hasSuffix(".tmp")
                }
                if name == nil { Thread.sleep(forTimeInterval: 0.005) }
            }
            running.send(SIGKILL)
            return name
        }
        _ = await running.wait(seconds: 300)
        let killed = try #require(leftover, "the save's temporary appeared")
        // `.a.json.TAG.XXXXXXXX.tmp`: the job's tag, then the random part.
        let parts = killed.split(separator: ".")
        #expect(parts.count == 5, "tagged: \(killed)")
        let tag = String(parts[2])

        // The conditional state's temporaries: this job's (fresh), another job's (fresh), and
        // an untagged one from two hours ago.
        let state = out.appendingPathComponent(".courier")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let ownState = state.appendingPathComponent(".state.\(tag).DEADBEEF.tmp")
        let otherState = state.appendingPathComponent(".state.0badf00d.DEADBEEF.tmp")
        let oldState = state.appendingPathComponent(".state.ABCDEF01.tmp")
        let otherOutput = out.appendingPathComponent(".a.json.0badf00d.CAFEBABE.tmp")
        let untaggedOutput = out.appendingPathComponent(".a.json.CAFEBABE.tmp")
        for file in [ownState, otherState, oldState, otherOutput, untaggedOutput] {
            try Data("partial".utf8).write(to: file)
        }
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: oldState.path)

        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)"))
        let again = try await space.run(backend: "curl")
        #expect(again.status == 0, "\(again.stderr)")
        for gone in [out.appendingPathComponent(killed), ownState, oldState] {
            #expect(!FileManager.default.fileExists(atPath: gone.path), "\(gone.lastPathComponent)")
            #expect(again.stderr.contains(gone.lastPathComponent), "\(again.stderr)")
        }
        // One line for the state folder's two (its own and the hour-old one).
        #expect(
            again.stderr.contains("removed 2 temporary files in ")
                && again.stderr.contains(", left by an interrupted run ("), "\(again.stderr)")
        for kept in [otherState, otherOutput, untaggedOutput] {
            #expect(FileManager.default.fileExists(atPath: kept.path), "\(kept.lastPathComponent)")
        }
        let saved = try String(contentsOf: out.appendingPathComponent("a.json"), encoding: .utf8)
        #expect(saved == "firstlast")
    }
}
