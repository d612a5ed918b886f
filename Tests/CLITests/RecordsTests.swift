import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// `records`: each response's items as JSON lines in a file under `outputDir`, by `append`,
/// `replace` or `merge`, against the fixture's record sets (`/records/…`), which a test changes
/// between runs. Files are compared byte for byte with lines the test writes itself.
@Suite("records")
struct RecordsTests {
    /// Sets the fixture's record set `key` (compact JSON objects, as the server sends them
    /// back), and whether its routes fail or wait.
    static func set(
        _ key: String, _ items: [String], fail: Bool = false, delayMs: Int = 0,
        on server: FixtureServer
    ) throws {
        let body =
            #"{"items": [\#(items.joined(separator: ","))], "fail": \#(fail), "delay_ms": \#(delayMs)}"#
        // A socket of its own: URLSession here waited behind the hostile pass's floods on
        // FoundationNetworking's one queue and timed out (CI).
        let (status, answer) = try LoopbackHTTP.exchange(
            "POST", server.url("/records/set?key=\(key)"), body: Data(body.utf8),
            headers: [("Content-Type", "application/json")])
        try #require(
            status == 200,
            "the fixture took the record set: \(String(decoding: answer, as: UTF8.self))")
    }

    /// The job's `records` object for `write`, with key and tombstones for merge.
    static func records(_ write: String, to: String = "records/users.jsonl") -> String {
        let extra = write == "merge" ? #", "key": "/id", "deleted": "/deleted""# : ""
        return #"{"from": "/items/*", "to": "\#(to)", "write": "\#(write)"\#(extra)}"#
    }

    /// Two tasks writing one file: a paginated listing (pages of 2) and a single request.
    static func writeJob(_ space: JobWorkspace, write: String, keys: (String, String)) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "a-list", "path": "/records/list", "query": {"key": "\#(keys.0)", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}}, "records": \#(records(write))},
                {"id": "b-list", "path": "/records/list", "query": {"key": "\#(keys.1)", "size": "10"},
                 "records": \#(records(write))}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
    }

    /// Three runs' record sets (a's, then b's): records added, changed, deleted (tombstones,
    /// which append and replace write as records), and one key in both sets.
    static let rounds: [([String], [String])] = [
        (
            [#"{"id":1,"v":1}"#, #"{"id":2,"v":1}"#, #"{"id":3,"v":1}"#],
            [#"{"id":10,"v":1}"#, #"{"id":3,"v":"b"}"#]
        ),
        (
            [#"{"id":1,"v":2}"#, #"{"id":3,"deleted":true}"#, #"{"id":4,"v":2,"tags":["x"]}"#],
            [#"{"id":10,"v":1}"#]
        ),
        (
            [
                #"{"id":2,"v":3}"#, #"{"id":4,"deleted":"2024-05-01"}"#,
                #"{"id":5,"deleted":false}"#,
            ],
            [#"{"id":11,"v":3}"#, #"{"id":1,"v":"b3"}"#]
        ),
    ]

    /// What the file must hold after `runs` rounds, computed here: the records of each round
    /// in task order (a's pages, then b), by `write`.
    static func expected(_ write: String, after runs: Int) -> String {
        var lines: [String] = []
        var merged: [Int: String] = [:]
        for round in rounds.prefix(runs) {
            let received = round.0 + round.1
            switch write {
            case "append": lines += received
            case "replace": lines = received
            default:
                for record in received {
                    let object =
                        try! JSONSerialization.jsonObject(with: Data(record.utf8)) as! [String: Any]
                    let id = object["id"] as! Int
                    let deleted = object["deleted"]
                    let tombstone =
                        (deleted as? Bool) == true
                        || ((deleted as? String).map { !$0.isEmpty } ?? false)
                    merged[id] = tombstone ? nil : record
                }
                lines = merged.keys.sorted().map { merged[$0]! }
            }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    static func file(_ space: JobWorkspace, _ path: String = "records/users.jsonl") -> String? {
        try? String(
            contentsOf: space.folder.appendingPathComponent("out/\(path)"), encoding: .utf8)
    }

    /// What is left under `out/.courier/records` (no part once every file is written).
    static func parts(_ space: JobWorkspace) -> [String] {
        let root = space.folder.appendingPathComponent("out/.courier/records")
        return (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".part") }
    }

    @Test(
        "append, replace and merge over three runs of added, changed and deleted records",
        arguments: ["append", "replace", "merge"], RunCommandTests.backends)
    func threeRuns(write: String, backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let keys = (FixtureServer.uniqueKey("ra"), FixtureServer.uniqueKey("rb"))
        try Self.writeJob(space, write: write, keys: keys)
        for (index, round) in Self.rounds.enumerated() {
            try Self.set(keys.0, round.0, on: space.server)
            try Self.set(keys.1, round.1, on: space.server)
            let run = try await space.run(backend: backend)
            #expect(run.status == 0, "run \(index + 1): \(run.stdout) \(run.stderr)")
            #expect(
                Self.file(space) == Self.expected(write, after: index + 1),
                "run \(index + 1):\n\(Self.file(space) ?? "no file")")
            #expect(Self.parts(space).isEmpty, "the parts went into the file")
        }
        let pages = try space.attempts("a-list").count
        #expect(pages == 6, "a's pages: 2 + 2 + 2")
    }

    @Test(
        "a failed task leaves the file byte for byte; --resume or replay --job completes it",
        arguments: ["resume", "replay"])
    func failureKeepsFile(repair: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let keys = (FixtureServer.uniqueKey("fa"), FixtureServer.uniqueKey("fb"))
        for write in ["merge"] {
            try Self.writeJob(space, write: write, keys: keys)
        }
        try Self.set(keys.0, Self.rounds[0].0, on: space.server)
        try Self.set(keys.1, Self.rounds[0].1, on: space.server)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 0, "\(first.stderr)")
        let before = try #require(Self.file(space))

        try Self.set(keys.0, Self.rounds[1].0, on: space.server)
        try Self.set(keys.1, Self.rounds[1].1, fail: true, on: space.server)
        let failed = try await space.run(backend: "curl")
        #expect(failed.status == 1)
        #expect(
            failed.stderr.contains(
                "records/users.jsonl: task b-list failed; the file is left as it was"),
            "\(failed.stderr)")
        #expect(Self.file(space) == before, "byte for byte")
        #expect(Self.parts(space).count == 1, "a-list's part waits: \(Self.parts(space))")

        try Self.set(keys.1, Self.rounds[1].1, on: space.server)
        let repaired: CourierBinary.Result
        if repair == "resume" {
            repaired = try await space.run(["--resume"], backend: "curl")
        } else {
            repaired = try await CourierBinary.run(
                [
                    "replay", space.logs.appendingPathComponent("e2e").path, "--job", "job.json",
                    "--log-dir", space.logs.path, "--no-progress",
                ], directory: space.folder)
        }
        #expect(repaired.status == 0, "\(repaired.stdout) \(repaired.stderr)")
        #expect(Self.file(space) == Self.expected("merge", after: 2))
        #expect(Self.parts(space).isEmpty)
        let sent = try space.attempts("a-list").count
        #expect(sent == 4, "a-list was not fetched again: its part from the failed run was used")
    }

    /// A listing whose ids fan out to one child per record (each merging its record into one
    /// file, and replacing a file of its own), and a paginated listing appending to another.
    static func writeFanOutJob(_ space: JobWorkspace, key: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "ids", "path": "/records/ids", "query": {"key": "\#(key)"},
                 "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "user-{id}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}},
                 "records": {"from": "", "to": "records/users.jsonl", "write": "merge", "key": "/id", "deleted": "/deleted"}},
                {"id": "one-{id}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}},
                 "records": {"from": "", "to": "records/by-id/{id}.jsonl", "write": "replace"}},
                {"id": "pages", "path": "/records/list", "query": {"key": "\#(key)", "size": "4"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "records/log.jsonl", "write": "append"}}
                """#,
            extra: #""concurrency": 2, "retry": {"maxAttempts": 1},"#)
    }

    /// Every file under `out/records`, with its bytes.
    static func recordFiles(_ space: JobWorkspace) -> [String: String] {
        let root = space.folder.appendingPathComponent("out/records")
        var files: [String: String] = [:]
        for case let name as String in FileManager.default.enumerator(atPath: root.path)?
            .allObjects ?? []
        {
            if let text = try? String(
                contentsOf: root.appendingPathComponent(name), encoding: .utf8)
            {
                files[name] = text
            }
        }
        return files
    }

    static func items(_ version: Int, count: Int = 24) -> [String] {
        (1...count).map { id in
            id % 7 == version % 7
                ? #"{"id":\#(id),"deleted":true}"#
                : #"{"id":\#(id),"name":"user \#(id)","v":\#(version)}"#
        }
    }

    @Test(
        "kill -9 mid-run, then --resume: the files are those of two clean runs, byte for byte",
        arguments: RunCommandTests.backends)
    func killThenResume(backend: String) async throws {
        let key = FixtureServer.uniqueKey("kill")
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let space = try JobWorkspace()
        defer { space.remove() }
        for workspace in [clean, space] { try Self.writeFanOutJob(workspace, key: key) }

        // The first version, in both.
        try Self.set(key, Self.items(1), on: space.server)
        for workspace in [clean, space] {
            let run = try await workspace.run(backend: backend)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let first = Self.recordFiles(space)
        #expect(first.count == 2 + 24, "users, log and one file per id: \(first.keys.sorted())")
        #expect(first == Self.recordFiles(clean))

        // The second version: killed mid-way, then resumed; the clean one runs whole.
        try Self.set(key, Self.items(2), delayMs: 300, on: space.server)
        let earlier = Self.logNames(space)
        let running = try RecoveryMatrixTests.launch(["run", "job.json"], space, backend: backend)
        try await RecoveryMatrixTests.waitForRequests(14, in: space, besides: earlier)
        running.send(SIGKILL)
        _ = await running.wait(seconds: 300)
        #expect(Self.recordFiles(space) == first, "a killed run changes no records file")
        #expect(!Self.parts(space).isEmpty, "the tasks done before the kill kept their parts")
        try Self.set(key, Self.items(2), on: space.server)
        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
        #expect(resumed.stdout.contains("done by earlier runs"), "\(resumed.stdout)")
        let whole = try await clean.run(backend: backend)
        #expect(whole.status == 0)
        let expected = Self.recordFiles(clean)
        let got = Self.recordFiles(space)
        #expect(
            got == expected,
            "differ: \(Set(got.keys).union(expected.keys).filter { got[$0] != expected[$0] }.sorted())"
        )
        #expect(Self.parts(space).isEmpty)
        // The merged file: ids not deleted in the second version, by id; the log appended.
        let users = Self.items(2).filter { !$0.contains("deleted") }.joined(separator: "\n") + "\n"
        #expect(got["users.jsonl"] == users)
        #expect(got["log.jsonl"] == (Self.items(1) + Self.items(2)).map { $0 + "\n" }.joined())
    }

    static func logNames(_ space: JobWorkspace) -> Set<String> {
        let folder = space.logs.appendingPathComponent("e2e")
        return Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
                $0.hasSuffix(".jsonl")
            })
    }

    @Test("SIGTERM mid-run: no file changes, the message says why, and --resume completes them")
    func interrupted() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("term")
        try Self.writeFanOutJob(space, key: key)
        try Self.set(key, Self.items(1, count: 12), on: space.server)
        #expect(try await space.run(backend: "curl").status == 0)
        let first = Self.recordFiles(space)

        try Self.set(key, Self.items(2, count: 12), delayMs: 500, on: space.server)
        let earlier = Self.logNames(space)
        let running = try RecoveryMatrixTests.launch(["run", "job.json"], space, backend: "curl")
        try await RecoveryMatrixTests.waitForRequests(4, in: space, besides: earlier)
        running.send(SIGTERM)
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 143, "\(output)")
        #expect(
            output.contains("the run was interrupted (signal 15) before every task ran"),
            "\(output)")
        #expect(Self.recordFiles(space) == first)

        try Self.set(key, Self.items(2, count: 12), on: space.server)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let users = Self.items(2, count: 12).filter { !$0.contains("deleted") }
        #expect(Self.recordFiles(space)["users.jsonl"] == users.map { $0 + "\n" }.joined())
        #expect(Self.parts(space).isEmpty)
    }

    @Test(
        "conditional merge: a 304 takes the records again from the saved copy, so a run that failed elsewhere loses none"
    )
    func conditionalMerge() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let keys = (FixtureServer.uniqueKey("ca"), FixtureServer.uniqueKey("cb"))
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/records/list", "query": {"key": "\#(keys.0)", "size": "50"},
                 "conditional": true, "save": "a.json",
                 "records": {"from": "/items/*", "to": "records/users.jsonl", "write": "merge", "key": "/id"}},
                {"id": "b", "path": "/records/list", "query": {"key": "\#(keys.1)", "size": "50"},
                 "records": {"from": "/items/*", "to": "records/users.jsonl", "write": "merge", "key": "/id"}}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
        try Self.set(keys.0, [#"{"id":1,"v":"a"}"#, #"{"id":3,"v":"a"}"#], on: space.server)
        try Self.set(keys.1, [#"{"id":2,"v":"b"}"#], fail: true, on: space.server)
        let failed = try await space.run(backend: "curl")
        #expect(failed.status == 1)
        #expect(Self.file(space) == nil, "b failed: no file yet")

        try Self.set(keys.1, [#"{"id":2,"v":"b"}"#], on: space.server)
        let second = try await space.run(backend: "urlsession")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("(1 not modified)"), "a's 304: \(second.stdout)")
        let expected = #"""
            {"id":1,"v":"a"}
            {"id":2,"v":"b"}
            {"id":3,"v":"a"}

            """#
        #expect(Self.file(space) == expected, "a's records, though its run failed and it got a 304")
        let third = try await space.run(backend: "curl")
        #expect(third.status == 0)
        #expect(Self.file(space) == expected)
    }

    @Test("a dry run writes nothing; a sharded run is refused before anything is sent")
    func dryRunAndShards() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, write: "merge", keys: ("d1", "d2"))
        let dry = try await space.run(["--dry-run"], backend: "curl")
        #expect(dry.status == 0)
        #expect(
            dry.stdout.contains("=> records merge into out/records/users.jsonl"), "\(dry.stdout)")
        #expect(
            !FileManager.default.fileExists(atPath: space.folder.appendingPathComponent("out").path)
        )
        let sharded = try await space.run(["--shard", "0/2"], backend: "curl")
        #expect(sharded.status == 2)
        #expect(
            sharded.stderr.contains(
                "tasks[0].records: a sharded run (shard 0/2) cannot write records"))
        #expect(!FileManager.default.fileExists(atPath: space.logs.path), "nothing was started")
    }

    /// A records file that cannot be written fails the run (exit 1) though every task was ok:
    /// the summary line says so beside its counts (trial V: "1 ok, 0 failed", exit 1).
    @Test("a records file that cannot be written: exit 1, and the summary says why")
    func unwritableRecordsFileIsInTheSummary() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("unwritable")
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/records/list", "query": {"key": "\#(key)", "size": "50"},
                 "records": {"from": "/items/*", "to": "users.jsonl", "write": "merge", "key": "/id"}}
                """#)
        try Self.set(key, [#"{"id":1,"v":"a"}"#], on: space.server)
        #expect(try await space.run(backend: "curl").status == 0)
        let file = space.folder.appendingPathComponent("out/users.jsonl")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("not a record\n".utf8))
        try handle.close()
        let before = try Data(contentsOf: file)
        let failed = try await space.run(backend: "curl")
        #expect(failed.status == 1)
        #expect(failed.stdout.contains("1 ok, 0 failed"), "\(failed.stdout)")
        #expect(
            failed.stdout.contains("; 1 records file not written (why: on stderr)"),
            "\(failed.stdout)")
        // A resume writes it from the parts kept, once mended (trial SSS: no repair line).
        #expect(failed.stdout.contains("--resume"), "\(failed.stdout)")
        #expect(failed.stderr.contains("is not a JSON record"), "\(failed.stderr)")
        #expect(try Data(contentsOf: file) == before, "left as it was")
        // Trial UUU: `run.end` and `--json` said every task ok, exit 1, and `report` called
        // the job complete. Both say it, and the report's next step is the resume.
        let end = try space.logLines().last { $0["event"] as? String == "run.end" }
        #expect(end?["recordsNotWritten"] as? Int == 1, "\(end ?? [:])")
        let report = try await CourierBinary.run(
            ["report", space.folder.appendingPathComponent("job.json").path, "--last", "1"],
            directory: space.folder)
        #expect(report.stdout.contains("1 records file not written"), "\(report.stdout)")
        #expect(report.stdout.contains("--resume"), "\(report.stdout)")
        let json = try await CourierBinary.run(
            ["report", space.folder.appendingPathComponent("job.json").path, "--json"],
            directory: space.folder)
        #expect(json.stdout.contains(#""complete":false"#), "\(json.stdout)")
        #expect(json.stdout.contains(#""recordsNotWritten":1"#), "\(json.stdout)")
        let summary = try await space.run(["--json"], backend: "curl")
        #expect(summary.stdout.contains(#""recordsNotWritten":1"#), "\(summary.stdout)")
        // A replay with the job writes no records file: it says so, exit 1 (trial WWW: 0).
        let night = try #require(try ReplayTests.logFiles(space).last)
        let replay = try await CourierBinary.run(
            ["replay", night, "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
        #expect(replay.stderr.contains("which a replay does not write"), "\(replay.stderr)")
        // Mended, the resume writes it, and the report says the job is done.
        try before.dropLast("not a record\n".utf8.count).write(to: file)
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 0, "\(resume.stdout)\(resume.stderr)")
        let done = try await CourierBinary.run(
            ["report", space.folder.appendingPathComponent("job.json").path, "--json"],
            directory: space.folder)
        #expect(done.stdout.contains(#""complete":true"#), "\(done.stdout)")
    }
}
