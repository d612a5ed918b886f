import CourierTestSupport
import Foundation
import Testing

/// A save's write, `fsync`s and rename block their thread, and with curl a run's tasks run on
/// the transport's event-loop threads: a save done there stalls every transfer of the loop.
/// The debug binary records any such step on a loop thread (`COURIER_DEBUG_LOOP_FILE_WORK`).
@Suite("Saves off the curl loops")
struct SavesOffLoopRunTests {
    @Test("a run's saves, conditional state and discarded temporaries stay off the curl loops")
    func savesStayOffLoops() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // Streamed saves, saves of bodies held in memory (`bodyContains` reads the body),
        // `conditional` saves (a journal line each) and failed streamed saves (a temporary
        // removed).
        try space.writeJob(
            tasks: #"""
                {"id": "s{n}", "path": "/bytes", "query": {"n": "2048"}, "foreach": {"n": {"range": [1, 20]}}, "save": "s/{n}.bin"},
                {"id": "m{n}", "path": "/etag", "query": {"v": "m{n}"}, "foreach": {"n": {"range": [1, 10]}}, "expect": {"bodyContains": "version"}, "save": "m/{n}.json"},
                {"id": "c{n}", "path": "/etag", "query": {"v": "c{n}"}, "foreach": {"n": {"range": [1, 10]}}, "conditional": true, "save": "c/{n}.json"},
                {"id": "f{n}", "path": "/status/404", "foreach": {"n": {"range": [1, 5]}}, "save": "f/{n}.bin"}
                """#,
            extra: #""concurrency": 8,"#)
        let record = space.folder.appendingPathComponent("loop-file-work.txt")
        let result = try await space.run(
            backend: "curl", environment: ["COURIER_DEBUG_LOOP_FILE_WORK": record.path])
        #expect(result.status == 1, "five tasks fail: \(result.stderr)")
        let output = space.folder.appendingPathComponent("out")
        for n in 1...20 {
            let saved = try Data(contentsOf: output.appendingPathComponent("s/\(n).bin"))
            #expect(saved.count == 2048)
        }
        for n in 1...10 {
            for path in ["m/\(n).json", "c/\(n).json"] {
                let saved = output.appendingPathComponent(path).path
                #expect(FileManager.default.fileExists(atPath: saved), "\(path) saved")
            }
        }
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: output.appendingPathComponent("f").path)
        #expect(leftovers.isEmpty, "failed saves leave no temporary: \(leftovers)")
        let onLoops = try String(contentsOf: record, encoding: .utf8)
        #expect(onLoops.isEmpty, "file work on a curl loop thread: \(onLoops.prefix(500))")
    }
}
