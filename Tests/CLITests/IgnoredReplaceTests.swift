import CourierTestSupport
import Foundation
import Testing

/// A response `onResponse` ignores keeps nothing, and so leaves a `replace` records file as it
/// was: written from that task's nothing, the file had been emptied, exit 0 (trial HH).
@Suite("ignored responses and replaced records")
struct IgnoredReplaceTests {
    @Test("an ignored response leaves a replace file as it was; the next answer replaces it")
    func ignoredKeepsTheFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("ignored-replace")
        try RecordsTests.set(key, [#"{"id": 1}"#, #"{"id": 2}"#], on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "all", "path": "/records/list", "query": {"key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "all.jsonl", "write": "replace", "select": ["id"], "csv": true}}
                """#, extra: #""onResponse": [{"status": [503], "action": "ignore"}],"#)
        let file = space.folder.appendingPathComponent("out/all.jsonl")
        #expect(try await space.run(backend: "curl").status == 0)
        let first = try Data(contentsOf: file)
        #expect(String(decoding: first, as: UTF8.self) == "{\"id\":1}\n{\"id\":2}\n")
        let csv = try Data(contentsOf: space.folder.appendingPathComponent("out/all.csv"))

        try RecordsTests.set(key, [], fail: true, on: space.server)
        let ignored = try await space.run(backend: "curl")
        #expect(ignored.status == 0, "\(ignored.stdout)\(ignored.stderr)")
        #expect(ignored.stdout.contains("ignored by onResponse"), "\(ignored.stdout)")
        #expect(
            ignored.stderr.contains("out/all.jsonl: task all's response was ignored (onResponse)"),
            "\(ignored.stderr)")
        #expect(try Data(contentsOf: file) == first, "the file is as it was")
        #expect(try Data(contentsOf: space.folder.appendingPathComponent("out/all.csv")) == csv)

        try RecordsTests.set(key, [#"{"id": 3}"#], on: space.server)
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try String(contentsOf: file, encoding: .utf8) == "{\"id\":3}\n")
    }
}
