import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Incremental syncs against Datasette (PyPI), an API server nobody here wrote: its own
/// filters (`updated_at__gt`), keyset pagination (`Link: rel="next"` with `_next`) and row
/// endpoints, the data changed between runs in its SQLite file as an upstream system would.
@Suite("sync against Datasette")
struct DatasetteSyncTests {
    /// A workspace with a job against Datasette's table `table`.
    struct Sync {
        let space: JobWorkspace
        let base: URL
        let database: String
        let table: String

        /// - Parameter table: the table's own name (the shipped example's `items`), else one
        ///   of the test's own.
        init(_ name: String, table: String? = nil) throws {
            (base, database) = try TestServers.datasette()
            self.table =
                table ?? "t_" + name + "_" + String(UUID().uuidString.prefix(8)).lowercased()
            space = try JobWorkspace()
        }

        func change(_ command: String, _ arguments: [String]) async throws {
            let script = PackagePaths.fixtures.appendingPathComponent("datasette_store.py").path
            let child = try ChildProcess(
                "/usr/bin/env", ["python3", script, database, table, command] + arguments,
                stdout: .null, stderr: .pipe)
            let errors = try await OffPoolRead.all(child.errors!)
            #expect(await child.exit(seconds: 300) == 0, "\(errors)")
        }

        func put(_ records: [(Int, Int, String)], deleted: Bool = false) async throws {
            let json = records.map {
                #"{"id": \#($0.0), "updated_at": "2026-01-01T00:00:\#(String(format: "%02d", $0.1))Z", "name": "\#($0.2)", "deleted": \#(deleted ? 1 : 0)}"#
            }
            try await change("put", ["[" + json.joined(separator: ",") + "]"])
        }

        /// The job: the changed rows since the cursor, two a page, each then fetched alone.
        func writeJob(folder: String = "out", prune: Bool = false) throws {
            let listing =
                prune
                ? #"{"_shape": "array", "_size": "2"}"#
                : #"{"_shape": "array", "_size": "2", "_sort": "updated_at", "updated_at__gt": "{since}"}"#
            let since =
                prune
                ? ""
                : #""since": {"max": "/*/updated_at", "start": "1970-01-01T00:00:00Z"},"#
            let text = #"""
                {"version": 1, "name": "ds", "baseURL": "\#(base.absoluteString)", "outputDir": "\#(folder)", "tasks": [
                 {"id": "changes", "path": "/store/\#(table).json", "query": \#(listing),
                  "paginate": {"next": {"linkHeader": "next"}, "items": "", "pageSize": 2}, \#(since)
                  "capture": {"ids": {"json": "/*/id"}}, "save": "changes/{page}.json"},
                 {"id": "row-{id}", "path": "/store/\#(table)/{id}.json", "query": {"_shape": "array"},
                  "foreach": {"id": {"capture": "ids"}}, "save": "rows/{id}.json"\#(prune ? #", "prune": "move""# : "")}
                ]}
                """#
            try text.write(
                to: space.folder.appendingPathComponent("job.json"), atomically: true,
                encoding: .utf8)
        }

        func run(_ backend: String) async throws -> CourierBinary.Result {
            try await space.run(backend: backend)
        }

        /// The `updated_at__gt` each listing request of the newest run sent.
        func sinceSent() throws -> [String] {
            let lines = try space.logLines(job: "ds")
            let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
            return lines.filter {
                $0["run"] as? String == run && $0["task"] as? String == "changes"
            }
            .compactMap { line in
                URLComponents(string: line["url"] as? String ?? "")?.queryItems?
                    .first { $0.name == "updated_at__gt" }?.value
            }
        }

        /// Every saved row file under `folder`, name → bytes.
        func rows(in folder: String = "out") throws -> [String: Data] {
            let url = space.folder.appendingPathComponent("\(folder)/rows")
            var rows: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
                rows[name] = try Data(contentsOf: url.appendingPathComponent(name))
            }
            return rows
        }
    }

    @Test(
        "nightly increments end as a clean full run does, byte for byte",
        arguments: RunCommandTests.backends)
    func increments(backend: String) async throws {
        let sync = try Sync("inc")
        defer { sync.space.remove() }
        try await sync.put((1...5).map { ($0, $0, "r\($0)") })
        try sync.writeJob()
        var result = try await sync.run(backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
        #expect(try sync.sinceSent() == Array(repeating: "1970-01-01T00:00:00Z", count: 3))
        #expect(try sync.rows().count == 5)

        // Two added, one changed, one deleted upstream as Datasette users do it: a flag.
        try await sync.put([(6, 6, "r6"), (2, 7, "r2 changed"), (7, 8, "r7")])
        try await sync.put([(4, 9, "r4")], deleted: true)
        result = try await sync.run(backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try sync.sinceSent() == Array(repeating: "2026-01-01T00:00:05Z", count: 2))
        let hits = try sync.space.logLines(job: "ds").filter {
            ($0["task"] as? String)?.hasPrefix("row-") == true
        }
        #expect(hits.count == 5 + 4, "only the changed rows were fetched again")

        // Nothing changed: one request.
        result = try await sync.run(backend)
        #expect(try sync.sinceSent() == ["2026-01-01T00:00:09Z"])

        // A clean full run now, into its own folder: the same rows, byte for byte.
        try sync.writeJob(folder: "clean")
        result = try await sync.run(backend)
        #expect(result.status == 0, "\(result.stderr)")
        let clean = try sync.rows(in: "clean")
        #expect(clean.count == 7)
        #expect(try sync.rows() == clean)
        #expect(
            String(decoding: clean["4.json"] ?? Data(), as: UTF8.self).contains(#""deleted": 1"#))
    }

    @Test("a row deleted upstream: its file is moved aside by prune after a full listing")
    func pruneDeleted() async throws {
        let sync = try Sync("prune")
        defer { sync.space.remove() }
        try await sync.put((1...5).map { ($0, $0, "r\($0)") })
        try sync.writeJob(prune: true)
        #expect(try await sync.run("curl").status == 0)
        try await sync.change("delete", ["3"])
        let result = try await sync.run("urlsession")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try sync.rows().keys.sorted() == ["1.json", "2.json", "4.json", "5.json"])
        #expect(
            result.stderr.contains("courier: prune: out/rows/3.json -> .courier/pruned/"),
            "\(result.stderr)")
    }

    /// The shipped `jobs/incremental-sync.example.json`, as it is, on Datasette: `since`,
    /// header pagination (two pages of 100), and records merged by id with tombstones; after a
    /// night of changes, the records file is byte for byte a clean full run's.
    @Test("the shipped example: increments and tombstones end as a clean run's records file")
    func shippedExample() async throws {
        let sync = try Sync("example", table: "items")
        defer { sync.space.remove() }
        func rows(_ ids: ClosedRange<Int>, minute: Int, deleted: Bool = false) -> String {
            let json = ids.map {
                #"{"id": \#($0), "updated_at": "2026-01-01T\#(String(format: "%02d:%02d", minute, $0 % 60)):00Z", "name": "item \#($0) at \#(minute)", "deleted": \#(deleted ? 1 : 0)}"#
            }
            return "[" + json.joined(separator: ",") + "]"
        }
        try await sync.change("put", [rows(1...150, minute: 1)])
        let example = PackagePaths.root.appendingPathComponent("jobs/incremental-sync.example.json")
        let clean = try JobWorkspace()
        defer { clean.remove() }
        for space in [sync.space, clean] {
            try FileManager.default.copyItem(
                at: example, to: space.folder.appendingPathComponent("job.json"))
        }
        let environment = ["ITEMS_API": sync.base.absoluteString]
        func run(_ space: JobWorkspace, _ backend: String) async throws -> CourierBinary.Result {
            try await CourierBinary.run(
                [
                    "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                    "--no-progress",
                ],
                environment: environment, directory: space.folder)
        }
        var result = try await run(sync.space, "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
        let records = sync.space.folder.appendingPathComponent("out/items-sync/records/items.jsonl")
        #expect(
            try String(contentsOf: records, encoding: .utf8).split(separator: "\n").count == 150)

        // A night: three rows changed, two added, two deleted (tombstones).
        try await sync.change("put", [rows(10...12, minute: 2)])
        try await sync.change("put", [rows(151...152, minute: 2)])
        try await sync.change("put", [rows(20...21, minute: 2, deleted: true)])
        result = try await run(sync.space, "urlsession")
        #expect(result.status == 0, "\(result.stderr)")
        let changes = try sync.space.logLines(job: "items-sync").filter {
            $0["task"] as? String == "changes"
                && ($0["url"] as? String)?.contains("updated_at__gt=2026-01-01T01%3A58%3A00Z")
                    == true
        }
        #expect(changes.count == 1, "one page of changes, asked from the cursor less a minute")
        let merged = try Data(contentsOf: records)
        #expect(String(decoding: merged, as: UTF8.self).split(separator: "\n").count == 150)

        result = try await run(clean, "curl")
        #expect(result.status == 0, "\(result.stderr)")
        let whole = try Data(
            contentsOf: clean.folder.appendingPathComponent("out/items-sync/records/items.jsonl"))
        #expect(merged == whole, "the increments end as a clean full run")
    }

    /// Resume inside a listing against Datasette's keyset pagination (`_next` in its `Link`):
    /// a 200-page listing killed part-way goes on from the page after the last one kept, and
    /// its records file ends as a clean run's, byte for byte.
    @Test("a listing killed mid-way goes on from its checkpoint, and ends as a clean run")
    func listingResume() async throws {
        let sync = try Sync("listing")
        defer { sync.space.remove() }
        try await sync.put((1...1000).map { ($0, $0 % 60, "r\($0)") })
        // The clean run is a job of its own name: one job's history would count it as done.
        func writeJob(_ folder: String) throws {
            let text = #"""
                {"version": 1, "name": "\#(folder == "out" ? "ds" : "ds-clean")", "baseURL": "\#(sync.base.absoluteString)", "outputDir": "\#(folder)", "tasks": [
                 {"id": "all", "path": "/store/\#(sync.table).json", "query": {"_shape": "array", "_size": "5"},
                  "paginate": {"next": {"linkHeader": "next"}},
                  "records": {"from": "/*", "to": "rows.jsonl", "write": "merge", "key": "/id"}}
                ]}
                """#
            try text.write(
                to: sync.space.folder.appendingPathComponent("job.json"), atomically: true,
                encoding: .utf8)
        }
        try writeJob("clean")
        #expect(try await sync.run("curl").status == 0)
        try writeJob("out")
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", sync.space.logs.path, "--no-progress"],
            directory: sync.space.folder)
        // The event: ten pages logged, watched off the cooperative pool (a poll on the pool
        // can be starved while the run ends), and the kill sent from there at once.
        let logs = sync.space.logs.appendingPathComponent("ds")
        let paged = await OffPool.when {
            let pages =
                ((try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? [])
                .compactMap {
                    try? String(contentsOf: logs.appendingPathComponent($0), encoding: .utf8)
                }
                .joined().components(separatedBy: #""outcome":"page""#).count - 1
            return pages >= 10
        } then: {
            running.send(SIGKILL)
        }
        #expect(paged, "ten pages were never logged")
        _ = await running.wait(seconds: 300)
        let cut = try sync.space.logLines(job: "ds").filter {
            $0["event"] as? String == "request"
        }.count
        let resumed = try await sync.space.run(["--resume"], backend: "urlsession")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let lines = try sync.space.logLines(job: "ds")
        let sent = lines.filter { $0["event"] as? String == "request" }.count - cut
        #expect(resumed.stderr.contains("goes on from page"), "\(resumed.stderr)")
        #expect(sent < 200, "the resume sent \(sent) requests: every page again")
        #expect(cut + sent >= 200, "\(cut) + \(sent) requests for 200 pages")
        let out = try Data(contentsOf: sync.space.folder.appendingPathComponent("out/rows.jsonl"))
        let clean = try Data(
            contentsOf: sync.space.folder.appendingPathComponent("clean/rows.jsonl"))
        #expect(out == clean, "the records file differs from the clean run's")
        #expect(String(decoding: clean, as: UTF8.self).split(separator: "\n").count == 1000)
    }

    /// A daily-window sync against Datasette's own filters (`updated_at__gte`/`__lt`), the
    /// repair flow an operator meets: a backfill killed part-way, a night run before anyone
    /// repairs it, rows corrected upstream in between, then the repair `report --json` names,
    /// run as named. The records file ends as a clean run's over the same rows, byte for byte
    /// (trial LL on the fixture server: that night's commit had removed the backfill's kept
    /// records, and its resume merged the older copies over the night's).
    @Test("a killed backfill, a night, then the repair report names: a clean run's records")
    func killedBackfillThenNight() async throws {
        let sync = try Sync("window")
        defer { sync.space.remove() }
        func rows(_ days: ClosedRange<Int>, _ version: String) -> [(Int, String, String)] {
            days.flatMap { day in
                [day * 10 + 1, day * 10 + 2].map { (id: Int) -> (Int, String, String) in
                    (id, "2026-01-0\(day)T0\(id % 10):00:00Z", "r\(id) \(version)")
                }
            }
        }
        func put(_ records: [(Int, String, String)]) async throws {
            let json = records.map {
                #"{"id": \#($0.0), "updated_at": "\#($0.1)", "name": "\#($0.2)"}"#
            }
            try await sync.change("put", ["[" + json.joined(separator: ",") + "]"])
        }
        // `slow`: a request a second, so that the backfill is still under way when it is
        // killed after two windows, however slowly the test sees its lines.
        func writeJob(name: String, folder: String, end: String, slow: Bool = false) throws {
            let rate = slow ? #""rateLimit": {"perSecond": 1, "burst": 1},"# : ""
            let text = #"""
                {"version": 1, "name": "\#(name)", "baseURL": "\#(sync.base.absoluteString)", "outputDir": "\#(folder)",
                 "retry": {"maxAttempts": 1}, \#(rate) "tasks": [
                 {"id": "day-{windowStart}", "path": "/store/\#(sync.table).json",
                  "query": {"_shape": "array", "_sort": "id", "updated_at__gte": "{windowStart}", "updated_at__lt": "{windowEnd}"},
                  "window": {"start": "2026-01-01", "end": "\#(end)", "step": "1d"},
                  "records": {"from": "/*", "to": "rows.jsonl", "write": "merge", "key": "/id"}}
                ]}
                """#
            try text.write(
                to: sync.space.folder.appendingPathComponent("\(name).json"), atomically: true,
                encoding: .utf8)
        }
        // Its logs are in the jobs' home's `logs/`, where `report JOB.json` reads them.
        func run(_ arguments: [String]) async throws -> CourierBinary.Result {
            let options = arguments.first == "run" ? ["--no-progress"] : []
            return try await CourierBinary.run(arguments + options, directory: sync.space.folder)
        }
        try await put(rows(1...8, "v1"))
        try writeJob(name: "ds", folder: "out", end: "2026-01-08")
        let first = try await run(["run", "ds.json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // Days 1 to 3 corrected upstream; a backfill of the week, killed after two windows.
        try await put(rows(1...3, "v2"))
        try writeJob(name: "ds", folder: "out", end: "2026-01-08", slow: true)
        let backfill = try CourierBinary.launch(
            ["run", "ds.json", "--window", "2026-01-01..2026-01-08", "--no-progress"],
            directory: sync.space.folder)
        let logs = sync.space.logs.appendingPathComponent("ds")
        let cut = await OffPool.when {
            let text = ((try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? [])
                .compactMap {
                    try? String(contentsOf: logs.appendingPathComponent($0), encoding: .utf8)
                }
                .joined()
            return text.components(separatedBy: #""event":"request""#).count - 1 >= 7 + 2
        } then: {
            backfill.send(SIGKILL)
        }
        #expect(cut, "the backfill's two windows were never logged")
        _ = await backfill.wait(seconds: 300)
        // Day 2 corrected again and a new row of day 8, then the next night: day 8's window.
        try await put(rows(2...2, "v3") + [(83, "2026-01-08T03:00:00Z", "r83 v1")])
        try writeJob(name: "ds", folder: "out", end: "2026-01-09")
        let night = try await run(["run", "ds.json"])
        #expect(night.status == 0, "\(night.stdout)\(night.stderr)")
        // The repair, as `report --json` names it, run word for word.
        let report = try await run(["report", "ds.json", "--json"])
        let object =
            try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let jobs = object?["jobs"] as? [[String: Any]]
        let lines = jobs?.first?["otherLines"] as? [[String: Any]] ?? []
        #expect(jobs?.first?["complete"] as? Bool == false, "\(report.stdout)")
        let next = try #require(lines.first?["next"] as? String, "\(report.stdout)")
        let words = next.split(separator: " ").map(String.init)
        #expect(words.first == "courier", "\(next)")
        let repair = try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: sync.space.folder)
        #expect(repair.status == 0, "\(next)\n\(repair.stdout)\(repair.stderr)")
        // The windows the killed backfill did are older than the night's file: fetched again.
        #expect(repair.stderr.contains("fetched again"), "\(repair.stderr)")
        let after = try await run(["report", "ds.json", "--json"])
        let afterJobs =
            (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])?[
                "jobs"] as? [[String: Any]]
        #expect(afterJobs?.first?["complete"] as? Bool == true, "\(after.stdout)")
        // A clean run of its own name over the rows as they are now.
        try writeJob(name: "ds-clean", folder: "clean", end: "2026-01-09")
        let clean = try await run(["run", "ds-clean.json"])
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
        let out = try Data(contentsOf: sync.space.folder.appendingPathComponent("out/rows.jsonl"))
        let whole = try Data(
            contentsOf: sync.space.folder.appendingPathComponent("clean/rows.jsonl"))
        #expect(out == whole, "\(String(decoding: out, as: UTF8.self))")
        let text = String(decoding: whole, as: UTF8.self)
        #expect(text.split(separator: "\n").count == 17)
        #expect(text.contains("r21 v3") && text.contains("r11 v2") && text.contains("r83 v1"))
    }
}
