import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// A save's write, `fsync`s and rename block their thread, and with curl a run's tasks run on
/// the transport's event-loop threads: a save done there stalls every transfer of the loop.
/// Debug builds record any such step taken on a loop thread (``LoopThreadFileWork``).
@Suite("SavesOffLoop")
struct SavesOffLoopTests {
    @Test("a run's saves, conditional state and discarded temporaries stay off the curl loops")
    func savesStayOffLoops() async throws {
        let server = try TestServers.fixture()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-saves-off-loop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("out")
        // Streamed saves, saves of bodies held in memory (`bodyContains` reads the body),
        // `conditional` saves (a journal line each) and failed streamed saves (a temporary
        // removed).
        let job = #"""
            {"version": 1, "name": "offloop", "baseURL": "\#(server.baseURL.absoluteString)",
             "outputDir": "\#(output.path)", "concurrency": 8, "tasks": [
              {"id": "s{n}", "path": "/bytes", "query": {"n": "2048"}, "foreach": {"n": {"range": [1, 20]}}, "save": "s/{n}.bin"},
              {"id": "m{n}", "path": "/etag", "query": {"v": "m{n}"}, "foreach": {"n": {"range": [1, 10]}}, "expect": {"bodyContains": "version"}, "save": "m/{n}.json"},
              {"id": "c{n}", "path": "/etag", "query": {"v": "c{n}"}, "foreach": {"n": {"range": [1, 10]}}, "conditional": true, "save": "c/{n}.json"},
              {"id": "f{n}", "path": "/status/404", "foreach": {"n": {"range": [1, 5]}}, "save": "f/{n}.bin"}
            ]}
            """#
        let jobFile = folder.appendingPathComponent("job.json")
        try job.write(to: jobFile, atomically: true, encoding: .utf8)
        let decoded = try JobDecoder.load(jobFile)
        let total = try JobValidator.validate(decoded)
        let runner = JobRunner(
            job: decoded,
            options: RunOptions(
                backend: .curl, logDirectory: folder.appendingPathComponent("logs"),
                quiet: true, progress: false),
            total: total)
        let summary = try await runner.run()

        #expect(summary.total == 45)
        #expect(summary.ok == 40)
        #expect(summary.failed == 5)
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
        // Only this run's steps: other suites in the process may save on a loop on purpose.
        let onLoops = LoopThreadFileWork.seen.withLock { $0 }.filter {
            $0.contains(folder.lastPathComponent)
        }
        #expect(onLoops.isEmpty, "file work on a curl loop thread: \(onLoops.prefix(5))")
    }

    /// The check above can fail: a save on a thread named as the loops are is recorded.
    @Test("a save on a thread named as the curl loops are is recorded")
    func recordsLoopThreadSaves() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-saves-witness-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("x.json")
        let done = Locked<Result<Void, FileError>?>(nil)
        let thread = Thread {
            // Named from inside, as the loops name themselves (a name set before `start` is
            // not applied by swift-corelibs-foundation).
            Thread.current.name = curlLoopThreadName
            let result = Result { () throws(FileError) in
                try OutputFile.write(Data("{}".utf8), to: target)
            }
            done.withLock { $0 = result }
        }
        thread.start()
        for _ in 0..<500 where done.withLock({ $0 }) == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(done.withLock { $0 } != nil, "the write ended within 5 s")
        try done.withLock { $0 }?.get()
        let seen = LoopThreadFileWork.seen.withLock { $0 }.filter {
            $0.contains(folder.lastPathComponent)
        }
        #expect(seen.contains { $0.hasPrefix("create ") })
        #expect(seen.contains { $0.hasPrefix("write ") })
        #expect(seen.contains { $0.hasPrefix("commit ") })
    }
}
