import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `since`: a cursor kept between runs (issue 28, item 2), against the fixture's `/store`, an
/// API that lists the records updated after `?since=`, in pages.
@Suite("since-cursors kept between runs")
struct SinceCursorTests {
    /// A record of the store, as JSON text.
    static func record(_ id: Int, _ updated: String, name: String) -> String {
        #"{"id": \#(id), "updated_at": "2026-01-01T00:00:\#(updated)Z", "name": "\#(name)"}"#
    }

    static func put(_ records: [String], key: String, on space: JobWorkspace) async throws {
        let url = space.server.baseURL.appendingPathComponent("store/put")
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "key", value: key)]
        try await ProbeClient().post(
            components.url!, json: Data("[\(records.joined(separator: ","))]".utf8))
    }

    static func writeJob(
        _ space: JobWorkspace, key: String, extraQuery: String = "", lookback: Int = 0
    )
        throws
    {
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}", "size": "2"\#(extraQuery)},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z", "lookback": \#(lookback)},
                 "save": "changes/{page}.json"}
                """#)
    }

    /// A `since` listing of the store whose ids feed a detail request each, which fails its
    /// first try (the job tries once).
    static func writeChildrenJob(_ space: JobWorkspace, key: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}"},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                 "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/flaky", "query": {"key": "\#(key)-{id}", "fail": "1"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
    }

    /// A listing whose ids feed a detail request each: when a detail request fails, the
    /// listing's cursor stays, and the next plain run fetches that item again (a trial's
    /// cursor moved past it, and no later night or repair ever fetched it).
    @Test(
        "a since listing's cursor stays when a child it fed failed; the next night fetches it",
        arguments: RunCommandTests.backends)
    func cursorWaitsForItsChildren(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-children")
        try await Self.put(
            [Self.record(1, "01", name: "a"), Self.record(2, "02", name: "b")], key: key, on: space)
        try Self.writeChildrenJob(space, key: key)
        func cursor() -> String { Self.cursorFile(space) ?? "" }
        let night = try await space.run(backend: backend)
        #expect(night.status == 1, "\(night.stdout)")
        #expect(
            !cursor().contains(#""sync":"2026-01-01T00:00:02Z""#), "the cursor moved: \(cursor())")
        let next = try await space.run(backend: backend)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(next.stdout.contains("3 tasks, 3 ok"), "both items fetched again: \(next.stdout)")
        #expect(cursor().contains("2026-01-01T00:00:02Z"), "\(cursor())")
    }

    /// A night whose detail request failed withholds the listing's cursor; the `--resume`
    /// that repairs it moves the cursor to what the night listed, so the night after fetches
    /// only what changed since (a trial's next night fetched the repaired night's items again).
    @Test(
        "a resume that completes a since listing's night moves its cursor to the night's",
        arguments: RunCommandTests.backends)
    func resumeRedeemsTheWithheldCursor(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-redeem")
        try await Self.put(
            [Self.record(1, "01", name: "a"), Self.record(2, "02", name: "b")], key: key, on: space)
        try Self.writeChildrenJob(space, key: key)
        func cursor() -> String { Self.cursorFile(space) ?? "" }
        #expect(try await space.run(backend: backend).status == 1)
        #expect(cursor().contains("#repair="), "\(cursor())")
        let repaired = try await space.run(["--resume"], backend: backend)
        #expect(repaired.stdout.contains("every task done"), "\(repaired.stdout)")
        #expect(cursor().contains(#""sync":"2026-01-01T00:00:02Z""#), "\(cursor())")
        #expect(!cursor().contains("#repair="), "\(cursor())")
        let next = try await space.run(backend: backend)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(next.stdout.contains("1 task, 1 ok"), "only the listing: \(next.stdout)")
    }

    /// A SIGTERM after the listing ended, while its first items' detail requests are in
    /// flight: the items not reached keep the cursor where it was (a check found the cursor
    /// moved, and the next night never fetched them), and the summary says tasks were not
    /// run and names the repair, though it cannot count them.
    @Test(
        "a SIGTERM before a since listing's children all ran keeps its cursor and says so",
        arguments: RunCommandTests.backends)
    func signalBeforeTheChildrenRan(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-term")
        let gate = FixtureServer.uniqueKey("since-term-gate")
        try await Self.put(
            (1...4).map { Self.record($0, "0\($0)", name: "n\($0)") }, key: key, on: space)
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}", "size": "10"},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                 "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/slow", "query": {"key": "\#(key)", "id": "{id}", "ms": "0", "hold_until": "\#(gate)"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json", "timeout": 900}
                """#, extra: #""concurrency": 2,"#)
        // The held requests wait for the gate, not a clock: with the default 30 s timeout a
        // loaded machine's held request timed out before the gate opened, and its retry's wait
        // was cut by the signal (make test, 2026-11-29).
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress", "--grace", "1h",
            ],
            directory: space.folder)
        // The records put, the listing, then two detail requests the server holds until the
        // signal is taken.
        await SignalTests.signal(
            running, with: SIGTERM, afterArrivals: 4, key: key, server: space.server)
        try await running.waitForStandardError(
            containing: "SIGTERM: no new task starts", seconds: 120)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)"))
        let (status, output) = await running.wait(seconds: 120)
        #expect(status == 143, "\(output)")
        #expect(output.contains("3 tasks, 3 ok"), "\(output)")
        #expect(output.contains("more tasks not started (those fed by captures)"), "\(output)")
        #expect(output.contains("to repair: courier run"), "\(output)")
        let cursor = Self.cursorFile(space) ?? ""
        #expect(!cursor.contains(#""sync":"2026-01-01T00:00:04Z""#), "the cursor moved: \(cursor)")
        // The report does not call the night complete: the run says tasks were not listed.
        let report = try await ReportCompletenessTests.jsonReport([
            space.logs.appendingPathComponent("e2e").path
        ])
        #expect(report["complete"] as? Bool == false, "\(report)")
        #expect((report["next"] as? String)?.hasSuffix("--resume") == true, "\(report)")

        // The next night, with no repair in between, fetches every item.
        let next = try await space.run(backend: backend)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(next.stdout.contains("5 tasks, 5 ok"), "\(next.stdout)")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/items").path)
        #expect(saved.sorted() == ["1.json", "2.json", "3.json", "4.json"])
    }

    /// A listing every shard runs (it captures; each shard fans out its own children), whose
    /// child failed on one shard only: that shard keeps its cursor back, and the next night
    /// both shards list from there, so the failed item is fetched. (The cursor was one entry:
    /// the shard whose children all succeeded moved it past the other's failed item for good.)
    @Test(
        "a since listing split in shards: a child failed on one shard is fetched the next night",
        arguments: RunCommandTests.backends)
    func shardsKeepTheirOwnCursors(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-shards")
        try await Self.put(
            (1...8).map { Self.record($0, "0\($0)", name: "n\($0)") }, key: key, on: space)
        func writeJob(night: String, fail: Int) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}", "size": "20"},
                     "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                     "capture": {"ids": {"json": "/items/*/id"}}},
                    {"id": "item-{id}", "path": "/flaky", "query": {"key": "\#(key)-\#(night)-{id}", "fail": "\#(fail)"},
                     "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        // Night 1: shard 0's children succeed; shard 1's fail.
        try writeJob(night: "1", fail: 0)
        let first = try await space.run(["--shard", "0/2"], backend: backend)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        try writeJob(night: "1b", fail: 1)
        let second = try await space.run(["--shard", "1/2"], backend: backend)
        #expect(second.status == 1, "shard 1 owns some items: \(second.stdout)")
        // Night 2, nothing failing: every item is saved.
        try writeJob(night: "2", fail: 0)
        for shard in ["0/2", "1/2"] {
            let night = try await space.run(["--shard", shard], backend: backend)
            #expect(night.status == 0, "\(shard): \(night.stdout)\(night.stderr)")
        }
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/items").path)
        #expect(saved.count == 8, "\(saved.sorted())")
        // Both shards moved their own entries; a whole-job run takes them in.
        let cursors = try #require(Self.cursorFile(space))
        #expect(cursors.contains(#""sync#shard=1/2":"2026-01-01T00:00:08Z""#), "\(cursors)")
        let whole = try await space.run(["--dry-run"], backend: backend)
        #expect(whole.stdout.contains("since=2026-01-01T00%3A00%3A08Z"), "\(whole.stdout)")
    }

    /// The `since` each request of the newest run sent, and the ids the run received.
    static func newestRun(_ space: JobWorkspace) throws -> (since: [String], ids: [Int]) {
        let lines = try space.logLines()
        let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
        let requests = lines.filter {
            $0["run"] as? String == run && $0["task"] as? String == "sync"
        }
        let since = requests.compactMap { line -> String? in
            guard let url = URLComponents(string: line["url"] as? String ?? "") else { return nil }
            return url.queryItems?.first { $0.name == "since" }?.value
        }
        var ids: [Int] = []
        for line in requests where line["outcome"] as? String != "failed" {
            guard let saved = line["savedTo"] as? String else { continue }
            let file = space.folder.appendingPathComponent(saved)
            let body =
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            ids += (body?["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        }
        return (since, ids)
    }

    static func cursorFile(_ space: JobWorkspace) -> String? {
        try? String(
            contentsOf: space.folder.appendingPathComponent("out/.courier/since"), encoding: .utf8)
    }

    /// A dry run shows exactly what the next run sends: the kept cursor, not the start value.
    @Test("--dry-run shows the kept cursor the next run sends")
    func dryRunShowsTheKeptCursor() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("dry")
        try await Self.put(
            [Self.record(1, "05", name: "a"), Self.record(2, "09", name: "b")], key: key, on: space)
        try Self.writeJob(space, key: key)
        let before = try await space.run(["--dry-run"], backend: "curl")
        #expect(before.stdout.contains("since=1970-01-01T00%3A00%3A00Z"), "\(before.stdout)")
        #expect(try await space.run(backend: "curl").status == 0)
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("since=2026-01-01T00%3A00%3A09Z"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("since=1970"), "\(plan.stdout)")
        // And the next run sends what the plan showed.
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try Self.newestRun(space).since.first == "2026-01-01T00:00:09Z")
    }

    @Test(
        "three runs: all, then what was added or changed, then a deletion's tombstone",
        arguments: RunCommandTests.backends)
    func threeRuns(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-\(backend)")
        try await Self.put(
            (1...5).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key)

        var result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        var run = try Self.newestRun(space)
        #expect(run.since == Array(repeating: "1970-01-01T00:00:00Z", count: 3))
        #expect(run.ids == [1, 2, 3, 4, 5])
        #expect(
            Self.cursorFile(space)
                == #"{"version":1,"cursors":{"sync":"2026-01-01T00:00:05Z"}}"#)

        // Two added, one changed.
        try await Self.put(
            [
                Self.record(6, "06", name: "r6"), Self.record(2, "07", name: "r2 changed"),
                Self.record(7, "08", name: "r7"),
            ], key: key, on: space)
        result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        run = try Self.newestRun(space)
        #expect(run.since == ["2026-01-01T00:00:05Z", "2026-01-01T00:00:05Z"])
        #expect(run.ids == [6, 2, 7])
        #expect(Self.cursorFile(space)?.contains("2026-01-01T00:00:08Z") == true)

        // A deletion, as the API reports it: a tombstone with a new updated_at.
        try await Self.put(
            [#"{"id": 3, "updated_at": "2026-01-01T00:00:09Z", "deleted": true}"#], key: key,
            on: space)
        result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        run = try Self.newestRun(space)
        #expect(run.since == ["2026-01-01T00:00:08Z"])
        #expect(run.ids == [3])

        // Nothing new: the cursor stays.
        result = try await space.run(backend: backend)
        run = try Self.newestRun(space)
        #expect(run.since == ["2026-01-01T00:00:09Z"] && run.ids.isEmpty)
        #expect(Self.cursorFile(space)?.contains("2026-01-01T00:00:09Z") == true)
    }

    /// Page 2 failed, or (trial NNN) a job's "404 is nothing to fetch" rule met it, and the
    /// task ended ok with the pages before it while its cursor passed every record never
    /// fetched. Either way the cursor stays, and the next run asks from it again.
    @Test(
        "a task that fails on page 2, or whose page 2 an onResponse rule ignores, leaves the cursor",
        arguments: ["failed", "ignored"])
    func pageTwoKeepsCursor(page2: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-\(page2)")
        try await Self.put(
            (1...3).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key)
        #expect(try await space.run(backend: "curl").status == 0)
        let before = Self.cursorFile(space)
        try await Self.put(
            (4...7).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        // With the rule, the query's closing brace ends `headers` instead, after the rule.
        let rule = #""onResponse": [{"status": [500], "action": "ignore"}]"#
        try Self.writeJob(
            space, key: key,
            extraQuery: page2 == "failed"
                ? #", "fail_page": "2""#
                : #", "fail_page": "2"}, \#(rule), "headers": {"X-Test": "1""#)
        let second = try await space.run(backend: "curl")
        #expect(second.status == (page2 == "failed" ? 1 : 0), "\(second.stderr)")
        if page2 == "ignored" {
            #expect(second.stderr.contains(ResponseRuleNote.cut), "\(second.stderr)")
            let last = try space.logLines().last { $0["event"] as? String == "request" }
            #expect((last?["warning"] as? String)?.contains(ResponseRuleNote.cut) == true)
        }
        #expect(Self.cursorFile(space) == before, "page 1 was saved, page 2 was not")
        try Self.writeJob(space, key: key)
        #expect(try await space.run(backend: "urlsession").status == 0)
        let run = try Self.newestRun(space)
        #expect(run.since.first == "2026-01-01T00:00:03Z")
        #expect(run.ids == [4, 5, 6, 7])
    }

    @Test("kill -9 on page 2 leaves the cursor; --resume and the next run fetch the window")
    func killedRunKeepsCursor() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-kill")
        try await Self.put(
            (1...2).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key)
        #expect(try await space.run(backend: "curl").status == 0)
        let before = Self.cursorFile(space)
        try await Self.put(
            (3...6).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key, extraQuery: #", "hang_page": "2""#)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 4, key: key, server: space.server, delay: 0.5)
        _ = await running.wait(seconds: 300)
        #expect(Self.cursorFile(space) == before)
        try Self.writeJob(space, key: key)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let run = try Self.newestRun(space)
        #expect(run.since.first == "2026-01-01T00:00:02Z", "the killed run moved nothing")
        #expect(run.ids == [3, 4, 5, 6])
        #expect(Self.cursorFile(space)?.contains("2026-01-01T00:00:06Z") == true)
    }

    @Test("lookback asks from before the cursor; {since} in the id is refused")
    func lookback() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-lookback")
        try await Self.put([Self.record(1, "30", name: "r1")], key: key, on: space)
        try Self.writeJob(space, key: key, lookback: 20)
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try await space.run(backend: "curl").status == 0)
        let run = try Self.newestRun(space)
        #expect(run.since == ["2026-01-01T00:00:10Z"])
        #expect(run.ids == [1], "the lookback window is fetched again")

        try space.writeJob(
            tasks:
                #"{"id": "s-{since}", "path": "/store/items", "since": {"max": "/items/*/updated_at", "start": "0"}}"#
        )
        let refused = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains(
                "tasks[0].id: cannot use {since}: the task's cursor is kept under its id"),
            "\(refused.stderr)")
    }

    /// `since` with `records`: a task's cursor moves only once its records are in their file. A
    /// second task writing the same file fails, so the file is left as it was, and the cursor
    /// of the task that ended ok must stay too, or the next run would skip records that never
    /// reached the file.
    @Test(
        "with records, the cursor waits for the records file", arguments: RunCommandTests.backends)
    func cursorWaitsForRecords(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-records-\(backend)")
        try await Self.put(
            (1...3).map { Self.record($0, String(format: "%02d", $0), name: "r\($0)") }, key: key,
            on: space)
        func job(otherPath: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}", "size": "2"},
                     "paginate": {"next": {"linkHeader": "next"}},
                     "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                     "records": {"from": "/items/*", "to": "items.jsonl", "write": "merge", "key": "/id"}},
                    {"id": "other", "path": "\#(otherPath)", "query": {"key": "\#(key)-other"},
                     "records": {"from": "/items/*", "to": "items.jsonl", "write": "merge", "key": "/id"}}
                    """#)
        }
        try job(otherPath: "/status/500")
        let failed = try await space.run(backend: backend)
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(try space.attempts("sync").last?["outcome"] as? String == "ok")
        #expect(
            Self.cursorFile(space) == nil, "sync ended ok, but its records never reached the file")
        let records = space.folder.appendingPathComponent("out/items.jsonl")
        #expect(!FileManager.default.fileExists(atPath: records.path))

        try job(otherPath: "/store/items")
        let fixed = try await space.run(backend: backend)
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try Self.newestRun(space).since.first == "1970-01-01T00:00:00Z")
        #expect(
            Self.cursorFile(space) == #"{"version":1,"cursors":{"sync":"2026-01-01T00:00:03Z"}}"#)
        let lines = try String(contentsOf: records, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
    }

    @Test("a since pointer that matches nothing on pages with items warns, and keeps no cursor")
    func misspeltPointer() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-typo")
        try await Self.put([Self.record(1, "01", name: "r1")], key: key, on: space)
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}"},
                 "since": {"max": "/items/*/updatedAt", "start": "1970-01-01T00:00:00Z"}, "save": "sync.json"}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        let note =
            "since: no value at /items/*/updatedAt on a page with items, so the cursor does not move and the next run asks from the same point again"
        #expect(
            result.stderr.contains("courier: e2e: warning: task sync: " + note), "\(result.stderr)")
        #expect(try space.attempts("sync").last?["warning"] as? String == note)
        #expect(Self.cursorFile(space) == nil)
    }

    /// An API that writes its timestamps with an offset and compares them as text (as the
    /// fixture and SQLite-backed servers do) gets the cursor back in its own form, lookback
    /// and all: in UTC, `…T10:11:53Z` sorted after `…T05:13:01-05:00` and skipped the change.
    @Test("a cursor with an offset is asked for in that offset")
    func offsetCursor() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("since-offset")
        func row(_ id: Int, _ time: String) -> String {
            #"{"id": \#(id), "updated_at": "2026-11-26T\#(time)-05:00", "name": "r\#(id)"}"#
        }
        try await Self.put([row(1, "05:10:00"), row(2, "05:12:53")], key: key, on: space)
        try Self.writeJob(space, key: key, lookback: 60)
        #expect(try await space.run(backend: "curl").status == 0)
        try await Self.put([row(3, "05:13:01")], key: key, on: space)
        #expect(try await space.run(backend: "urlsession").status == 0)
        let run = try Self.newestRun(space)
        #expect(run.since == ["2026-11-26T05:11:53-05:00"])
        #expect(run.ids == [2, 3])
    }
}

/// The words a task's line and stderr say when an `onResponse` rule ignored a page after its
/// first (as the runner's `ResponseRule.cutNote`, which the CLI tests cannot import).
enum ResponseRuleNote {
    static let cut = "an onResponse rule ignored this page, so its listing may have stopped early"
}
