import CourierTestSupport
import Foundation
import Testing

/// `records.csv`: the CSV beside a records file, RFC 4180, remade with the file, loaded into
/// SQLite by Debian's `sqlite3` as docs/job-file.md shows.
@Suite("records CSV")
struct RecordsCSVTests {
    static let items = [
        #"{"id": 1, "name": "plain", "score": 1.50, "tags": ["a", "b"], "ok": true}"#,
        #"{"id": 2, "name": "comma, \"quoted\"", "score": null, "ok": false}"#,
        #"{"id": 3, "name": "two\nlines é", "score": 3, "extra": {"x": 1}}"#,
    ]

    static func writeJob(_ space: JobWorkspace, key: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/list", "query": {"key": "\#(key)", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "users.jsonl", "write": "merge", "key": "/id",
                             "select": ["id", "name", "score", "tags", "ok"], "add": {"source": "list"},
                             "csv": true}}
                """#)
    }

    @Test("the CSV follows the records file, quoted as RFC 4180 says, and sqlite3 loads it")
    func csvBesideRecords() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("csv")
        try RecordsTests.set(key, Self.items, on: space.server)
        try Self.writeJob(space, key: key)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 0, "\(first.stderr)")
        let csvURL = space.folder.appendingPathComponent("out/users.csv")
        let csv = try String(contentsOf: csvURL, encoding: .utf8)
        #expect(
            csv == "id,name,score,tags,ok,source\r\n"
                + "1,plain,1.5,\"[\"\"a\"\",\"\"b\"\"]\",true,list\r\n"
                + "2,\"comma, \"\"quoted\"\"\",,,false,list\r\n"
                + "3,\"two\nlines é\",3,,,list\r\n")

        // Loaded as docs/job-file.md shows.
        let database = space.folder.appendingPathComponent("users.db").path
        let loaded = try await Self.sqlite(
            database, ".import --csv \(csvURL.path) users",
            "SELECT count(*), sum(score), max(length(name)) FROM users;")
        #expect(loaded == "3|4.5|15\n", "\(loaded)")

        // A merge that changes one record: the CSV is remade with the file.
        try RecordsTests.set(
            key, [Self.items[0], #"{"id": 2, "name": "renamed", "ok": true}"#, Self.items[2]],
            on: space.server)
        #expect(try await space.run(backend: "urlsession").status == 0)
        let second = try String(contentsOf: csvURL, encoding: .utf8)
        #expect(second.contains("\r\n2,renamed,,,true,list\r\n"), "\(second)")

        // A CSV lost since (or left behind by a killed run) is made again, though no record
        // changed.
        try FileManager.default.removeItem(at: csvURL)
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try String(contentsOf: csvURL, encoding: .utf8) == second)
        let names = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out").path)
        #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
    }

    /// A nightly sync whose source did not change leaves its files alone: the same file
    /// (its inode: a replacement is a new file renamed over it) with the same time of last
    /// change, so that a backup or `make` sees nothing new. They had been written again.
    @Test("a run that changes no record leaves the records file and its CSV as they were")
    func noChangeNoRewrite() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("csv-same")
        try RecordsTests.set(key, Self.items, on: space.server)
        try Self.writeJob(space, key: key)
        #expect(try await space.run(backend: "curl").status == 0)
        let out = space.folder.appendingPathComponent("out")
        func identity(_ name: String) throws -> [String] {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: out.appendingPathComponent(name).path)
            return [
                "\(attributes[.systemFileNumber] ?? "")",
                "\((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)",
            ]
        }
        let before = try ["users.jsonl", "users.csv"].map(identity)
        let bytes = try Data(contentsOf: out.appendingPathComponent("users.jsonl"))
        for backend in ["urlsession", "curl"] {
            let again = try await space.run(backend: backend)
            #expect(again.status == 0, "\(again.stderr)")
        }
        #expect(try ["users.jsonl", "users.csv"].map(identity) == before)
        #expect(try Data(contentsOf: out.appendingPathComponent("users.jsonl")) == bytes)
        let left = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(
            left.filter { !$0.hasPrefix(".courier") }.sorted() == ["users.csv", "users.jsonl"],
            "no temporary left: \(left)")
        // A change is written, as before.
        try RecordsTests.set(
            key, [Self.items[0], #"{"id": 2, "name": "renamed", "ok": true}"#, Self.items[2]],
            on: space.server)
        #expect(try await space.run(backend: "curl").status == 0)
        let after = try ["users.jsonl", "users.csv"].map(identity)
        #expect(after[0] != before[0] && after[1] != before[1])
    }

    /// Runs `sqlite3 DATABASE` with `commands` on its standard input; what it printed.
    static func sqlite(_ database: String, _ commands: String...) async throws -> String {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-sqlite-\(UUID().uuidString).sql")
        try (commands.joined(separator: "\n") + "\n").write(
            to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let child = try ChildProcess(
            "/usr/bin/env", ["sqlite3", database], stdin: .file(script), stdout: .pipe,
            stderr: .pipe)
        let output = try await OffPoolRead.all(child.output!)
        let errors = try await OffPoolRead.all(child.errors!)
        #expect(await child.exit(seconds: 120) == 0, "\(errors)")
        return output
    }
}
