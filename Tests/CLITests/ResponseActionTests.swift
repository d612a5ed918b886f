import CourierTestSupport
import Foundation
import Testing

/// `onResponse`: responses that mean something else than their status says, on both
/// backends, with the recovery paths a user combines them with; and against Datasette, whose
/// 404 for a row that is gone nobody here wrote.
@Suite("onResponse")
struct ResponseActionTests {
    @Test(
        "ignore ends ok with nothing kept, retry sends a 200 again, fail stops a 503 at once",
        arguments: RunCommandTests.backends)
    func actions(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("actions-\(backend)")
        try space.writeJob(
            tasks: #"""
                {"id": "child-{s}", "path": "/status/{s}", "query": {"key": "\#(key)-child"},
                 "foreach": {"s": [200, 404, 410]}, "save": "child-{s}.txt"},
                {"id": "later", "path": "/flaky", "query": {"key": "\#(key)-later", "fail": "2", "status": "200"},
                 "retry": {"initialDelay": 0.01}, "save": "later.json",
                 "onResponse": [{"status": [200], "bodyContains": "\"ok\": false", "action": "retry"}]},
                {"id": "denied", "path": "/flaky", "query": {"key": "\#(key)-denied", "fail": "9", "status": "503"},
                 "onResponse": [{"status": [503], "action": "fail"}]}
                """#,
            extra: #""onResponse": [{"status": [404, 410], "action": "ignore"}],"#)
        let first = try await space.run(backend: backend)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(
            first.stdout.contains("5 tasks, 4 ok (2 ignored by onResponse), 1 failed"),
            "\(first.stdout)")
        // Ignored children saved nothing; the 200 asked for again was saved once it was right.
        let out = space.folder.appendingPathComponent("out")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
                == ["child-200.txt", "later.json"])
        let later = try String(
            contentsOf: out.appendingPathComponent("later.json"), encoding: .utf8)
        #expect(later.contains(#""ok": true"#), "\(later)")
        #expect(try await ServerHits.of("\(key)-later", on: space.server).count == 3)
        #expect(try await ServerHits.of("\(key)-denied", on: space.server).count == 1, "no retry")

        let ignored = try space.attempts("child-404")
        #expect(ignored.map { $0["outcome"] as? String } == ["ok"])
        #expect(ignored.first?["action"] as? String == "ignore")
        #expect(ignored.first?["savedTo"] == nil)
        #expect(
            try space.attempts("later").map { $0["action"] as? String } == ["retry", "retry", nil])
        let denied = try #require(try space.attempts("denied").first)
        #expect(denied["action"] as? String == "fail")
        #expect((denied["error"] as? [String: Any])?["kind"] as? String == "responseAction")
        let end = try #require(try space.logLines().last)
        #expect((end["tasks"] as? [String: Int])?["ignored"] == 2, "\(end)")
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e").path])
        #expect(report.stdout.contains("2 ignored by onResponse"), "\(report.stdout)")

        // A resume sends only what failed: ignored tasks are done.
        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 1, "\(resumed.stderr)")
        #expect(try await ServerHits.of("\(key)-child", on: space.server).count == 3)
        #expect(try await ServerHits.of("\(key)-denied", on: space.server).count == 2)
        // So does a replay of the job's failures.
        let replayed = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--backend", backend],
            directory: space.folder)
        #expect(replayed.status == 1, "\(replayed.stderr)")
        #expect(try await ServerHits.of("\(key)-child", on: space.server).count == 3)
        #expect(try await ServerHits.of("\(key)-denied", on: space.server).count == 3)
    }

    @Test("a child deleted since its parent listed it is ignored, not failed (Datasette)")
    func deletedChildAgainstDatasette() async throws {
        let index = try DatasetteSyncTests.Sync("idx")
        let rows = try DatasetteSyncTests.Sync("rows")
        defer {
            index.space.remove()
            rows.space.remove()
        }
        try await index.put((1...5).map { ($0, $0, "i\($0)") })
        try await rows.put((1...5).map { ($0, $0, "r\($0)") })
        try await rows.change("delete", ["3"])
        func writeJob(ignoring: Bool) throws {
            let rules = ignoring ? #""onResponse": [{"status": [404], "action": "ignore"}],"# : ""
            try #"""
            {"version": 1, "name": "ds", "baseURL": "\#(index.base.absoluteString)", "outputDir": "out", "tasks": [
             {"id": "ids", "path": "/store/\#(index.table).json", "query": {"_shape": "array"},
              "capture": {"ids": {"json": "/*/id"}}},
             {"id": "row-{id}", "path": "/store/\#(rows.table)/{id}.json", "query": {"_shape": "array"},
              "foreach": {"id": {"capture": "ids"}}, \#(rules) "save": "rows/{id}.json"}
            ]}
            """#.write(
                to: index.space.folder.appendingPathComponent("job.json"), atomically: true,
                encoding: .utf8)
        }
        try writeJob(ignoring: false)
        let strict = try await index.run("curl")
        #expect(strict.status == 1, "without a rule, the 404 fails its task: \(strict.stdout)")
        #expect(strict.stderr.contains("task row-3 failed"), "\(strict.stderr)")

        try writeJob(ignoring: true)
        for backend in RunCommandTests.backends {
            let result = try await index.run(backend)
            #expect(result.status == 0, "\(backend): \(result.stdout)\(result.stderr)")
            #expect(
                result.stdout.contains("6 tasks, 6 ok (1 ignored by onResponse)"),
                "\(backend): \(result.stdout)")
        }
        #expect(try index.rows().keys.sorted() == ["1.json", "2.json", "4.json", "5.json"])
        let gone = try index.space.attempts("row-3", job: "ds").last
        #expect(gone?["status"] as? Int == 404 && gone?["action"] as? String == "ignore")
    }
}
