import CourierTestSupport
import Foundation
import Testing

/// Hostile servers met through `courier run`, each run in a process of its own: a save from a
/// body that never ends, and header blocks that cost FoundationNetworking seconds to parse (on
/// a work queue every URLSession of a process shares, so not for the test process itself).
/// Each attempt must end on its own deadline or the header bound, and the run exit soon after.
@Suite("hostile servers through courier run", .serialized)
struct HostileServerRunTests {
    /// The error kind of each task's one attempt (`nil` when it succeeded).
    static func kinds(_ space: JobWorkspace) throws -> [String: String?] {
        var kinds: [String: String?] = [:]
        for line in try space.logLines() where line["event"] as? String == "request" {
            let task = try #require(line["task"] as? String)
            #expect(kinds[task] == nil, "\(task): one attempt")
            kinds[task] = (line["error"] as? [String: Any])?["kind"] as? String
        }
        return kinds
    }

    @Test(
        "a save from an endless body times out at its deadline, the run exits soon after, in bounded memory",
        .timeLimit(.minutes(3)), arguments: RunCommandTests.backends)
    func endlessSave(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // The flood comes from a fixture server of its own (TestServers.floodFixture).
        let endless = try TestServers.floodFixture().url("/endless-fast")
        try space.writeJob(
            tasks: #"""
                {"id": "endless", "url": "\#(endless.absoluteString)", "save": "endless.bin",
                 "timeout": 4, "retry": {"maxAttempts": 1}}
                """#)
        let started = Date()
        let run = try await StreamedSaveTests.runMeasuringRSS(space, backend: backend)
        let elapsed = Date().timeIntervalSince(started)
        #expect(run.status == 1, "\(run.stderr)")
        // Measured after the fix: 5.5 s on both; before it, URLSession took 8.5 to 78 s.
        #expect(elapsed < 15, "the run took \(elapsed) s for a 4 s deadline")
        #expect(try Self.kinds(space) == ["endless": "timeout"])
        // Measured: curl 35 MiB, URLSession 75 MiB; before the fix URLSession reached 3.6 GiB.
        #expect(run.peakKiB > 0 && run.peakKiB < 512 << 10, "peak RSS \(run.peakKiB) KiB")
        let out = space.folder.appendingPathComponent("out")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
        #expect(left.filter { !$0.hasPrefix(".courier") }.isEmpty, "nothing saved or left: \(left)")
    }

    @Test(
        "huge header blocks are refused or time out, and the run exits soon after",
        .timeLimit(.minutes(3)), arguments: RunCommandTests.backends)
    func hugeHeaderBlocks(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "folded", "path": "/huge-head/folded", "query": {"n": "40000"},
                 "timeout": 4},
                {"id": "many", "path": "/huge-head/many", "query": {"n": "100000"}, "timeout": 4},
                {"id": "other", "path": "/bytes", "query": {"n": "1000"}, "timeout": 10}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let started = Date()
        let run = try await space.run(backend: backend)
        let elapsed = Date().timeIntervalSince(started)
        let kinds = try Self.kinds(space)
        #expect(Set(kinds.keys) == ["folded", "many", "other"], "\(kinds)")
        #expect(elapsed < 30, "the run took \(elapsed) s; the longest deadline is 10 s")
        switch backend {
        case "curl":
            #expect(run.status == 1, "\(run.stderr)")
            #expect(kinds["folded"] == "badResponse" && kinds["many"] == "badResponse", "\(kinds)")
            #expect(kinds["other"] == .some(nil), "the other task is not held up: \(kinds)")
        default:
            // FoundationNetworking parses each block, some 15 s, before anything can refuse
            // it, on the queue the other request needs too: each is freed by its deadline.
            for task in ["folded", "many"] {
                #expect(["timeout", "badResponse"].contains(kinds[task] ?? nil), "\(kinds)")
            }
            #expect([nil, "timeout"].contains(kinds["other"] ?? "missing"), "\(kinds)")
        }
    }
}
