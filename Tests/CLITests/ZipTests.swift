import CourierTestSupport
import Foundation
import Testing

/// `"zip": true` pairs foreach values up instead of taking every combination.
@Suite("zipped foreach")
struct ZipTests {
    @Test("lists and lines files advance together")
    func pairsUp() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("zip")
        try "ann\nbob\ncy\n".write(
            to: space.folder.appendingPathComponent("names.txt"), atomically: true, encoding: .utf8)
        try space.writeJob(
            tasks:
                #"{"id": "u{id}", "path": "/echo", "query": {"name": "{name}", "key": "\#(key)"}, "foreach": {"id": [1, 2, 3], "name": {"lines": "names.txt"}}, "zip": true}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3 tasks"), "\(result.stdout)")
        let paths = try await ServerHits.of(key, on: space.server).requests.map(\.path).sorted()
        #expect(
            paths.map {
                $0.contains("name=ann") || $0.contains("name=bob") || $0.contains("name=cy")
            } == [true, true, true])
        let tasks = Set(try space.logLines().compactMap { $0["task"] as? String })
        #expect(tasks == ["u1", "u2", "u3"])
        for (id, name) in [("u1", "ann"), ("u2", "bob"), ("u3", "cy")] {
            #expect(
                (try space.attempts(id).first?["url"] as? String)?.contains("name=\(name)") == true)
        }
    }

    @Test("different lengths and a single variable are exit-2 errors")
    func mismatches() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "a{x}", "path": "/echo", "foreach": {"x": [1, 2, 3], "y": [1, 2]}, "zip": true},
                {"id": "b{x}", "path": "/echo", "foreach": {"x": [1, 2]}, "zip": true}
                """#)
        let result = try await space.run(["--dry-run"], backend: "curl")
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("tasks[1].zip: needs at least two foreach variables"),
            "\(result.stderr)")
        // The length check runs once the file is otherwise valid.
        try space.writeJob(
            tasks:
                #"{"id": "a{x}", "path": "/echo", "foreach": {"x": [1, 2, 3], "y": [1, 2]}, "zip": true}"#
        )
        let lengths = try await space.run(["--dry-run"], backend: "curl")
        #expect(lengths.status == 2)
        #expect(
            lengths.stderr.contains(
                "tasks[0].foreach: zip pairs values up, but x has 3 and y has 2"),
            "\(lengths.stderr)")
    }
}
