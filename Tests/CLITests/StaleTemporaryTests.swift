import CourierTestSupport
import Foundation
import Testing

/// A kill -9 mid-save leaves `.name.XXXXXXXX.tmp` beside the output; the next run that saves
/// into that folder removes it once it is an hour old, and touches nothing else.
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
}
