import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `"conditional": true`: validators kept in `outputDir/.courier/state`, 304s leave files alone.
@Suite("conditional requests")
struct ConditionalTests {
    static func writeJob(_ space: JobWorkspace, key: String, version: String, extra: String = "")
        throws
    {
        try space.writeJob(
            tasks: #"""
                {"id": "e{n}", "path": "/etag", "query": {"v": "\#(version)-{n}", "key": "\#(key)"}, "foreach": {"n": {"range": [1, 5]}},
                 "conditional": true, "save": "e/{n}.json"}\#(extra)
                """#)
    }

    @Test(
        "the second run gets 304s, files untouched; a change is fetched",
        arguments: RunCommandTests.backends)
    func secondRunIsNotModified(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("etag")
        try Self.writeJob(space, key: key, version: "a")
        #expect(try await space.run(backend: backend).status == 0)
        let file = space.folder.appendingPathComponent("out/e/3.json")
        let firstBody = try Data(contentsOf: file)
        // A file rewritten in place or renamed over gets a new inode or a new modification
        // time; both are compared (no wait for the clock to move: a rename is seen at once).
        let firstDate =
            try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
        func inode() throws -> UInt64 {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            return try #require((attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
        }
        let firstInode = try inode()
        let state = space.folder.appendingPathComponent("out/.courier/state")
        let saved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as? [String: Any]
        #expect(
            (saved?["entries"] as? [String: [String: Any]])?["e/3.json"]?["etag"] as? String
                == "\"a-3\"")

        let second = try await space.run(backend: backend)
        #expect(second.status == 0, "\(second.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 10)
        #expect(hits.suffix(5).allSatisfy { $0.header("If-None-Match")?.hasPrefix("\"a-") == true })
        #expect(try Data(contentsOf: file) == firstBody)
        #expect(
            try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
                == firstDate, "the file was not rewritten")
        #expect(try inode() == firstInode, "the file was not replaced")
        let notModified = try space.logLines().filter { $0["notModified"] as? Bool == true }
        #expect(notModified.count == 5)

        // A new version on the server is fetched and saved.
        try Self.writeJob(space, key: key, version: "b")
        #expect(try await space.run(backend: backend).status == 0)
        #expect(try String(contentsOf: file, encoding: .utf8).contains("b-3"))

        // The report counts the not-modified tasks.
        let logs = try FileManager.default.contentsOfDirectory(
            atPath: space.logs.appendingPathComponent("e2e").path
        ).filter { $0.hasSuffix(".jsonl") }.sorted()
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e/\(logs[1])").path])
        #expect(report.stdout.contains("(5 not modified)"), "\(report.stdout)")
    }

    /// A saved file overwritten by hand (or cut short, or restored from elsewhere) was kept
    /// for ever: the server answered 304 to the validators of the file courier had saved,
    /// and the run said `ok` (trial J). A file changed since its save is fetched whole.
    @Test(
        "a saved file changed since its save is fetched whole and repaired; the others stay",
        arguments: RunCommandTests.backends)
    func changedFileIsRepaired(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("etagrepair")
        try Self.writeJob(space, key: key, version: "a")
        #expect(try await space.run(backend: backend).status == 0)
        let edited = space.folder.appendingPathComponent("out/e/2.json")
        let clean = try Data(contentsOf: edited)
        // Same size, other bytes: only the stamp tells it apart.
        try Data(repeating: 0x78, count: clean.count).write(to: edited)
        let untouched = try Data(contentsOf: space.folder.appendingPathComponent("out/e/4.json"))

        let second = try await space.run(backend: backend)
        #expect(second.status == 0, "\(second.stderr)")
        let asked = try await ServerHits.of(key, on: space.server).requests.suffix(5)
        let unconditional = asked.filter { $0.header("If-None-Match") == nil }
        #expect(
            unconditional.map(\.path).count == 1
                && unconditional.first?.path.contains("v=a-2") == true,
            "only the changed file is fetched whole: \(unconditional.map(\.path))")
        #expect(try Data(contentsOf: edited) == clean, "the server's bytes are back")
        #expect(
            try Data(contentsOf: space.folder.appendingPathComponent("out/e/4.json")) == untouched)
        // A third run asks for all five again, the repaired one too.
        #expect(try await space.run(backend: backend).status == 0)
        let third = try await ServerHits.of(key, on: space.server).requests.suffix(5)
        #expect(third.allSatisfy { $0.header("If-None-Match") != nil })
    }

    /// The curl script of `replay --job` left out the conditions the replay itself sends from
    /// the state (trial M): run as printed, it fetched the outputs whole.
    @Test("replay --job --format curl shows a conditional task's conditions from the state")
    func replayScriptHasConditions() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("etagscript")
        try Self.writeJob(space, key: key, version: "s")
        #expect(try await space.run(backend: "curl").status == 0)
        let script = try await CourierBinary.run(
            [
                "replay", "--job", "job.json", "--all", "--format", "curl", "--log-dir",
                space.logs.path,
            ], directory: space.folder)
        #expect(script.status == 0, "\(script.stderr)")
        let asks = script.stdout.split(separator: "\n").filter { $0.contains("If-None-Match") }
        #expect(asks.count == 5, "\(script.stdout)")
        #expect(asks.contains { $0.contains("s-3") }, "\(script.stdout)")
    }

    @Test("the state file is whole after kill -9 mid-run")
    func stateSurvivesKill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("etagkill")
        try Self.writeJob(
            space, key: key, version: "k",
            extra:
                #", {"id": "hang", "path": "/slow", "query": {"ms": "30000", "key": "\#(key)-hang"}}"#
        )
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        // The state is flushed once a second while the run goes on.
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 1, key: "\(key)-hang", server: space.server,
            delay: 1.5)
        _ = await running.wait(seconds: 300)
        let state = space.folder.appendingPathComponent("out/.courier/state")
        let saved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as? [String: Any]
        #expect((saved?["entries"] as? [String: Any])?.count == 5, "\(saved ?? [:])")
        // The state file, and the lock its writers take (shards share the file). A journal
        // may stay too: a kill between a flush's write and its removal of the journal it
        // folded in (a loaded machine's make test landed there) leaves it for the next run,
        // which reads it (ConditionalStateTests). Never a half-written temporary.
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: state.deletingLastPathComponent().path
        ).filter { !$0.hasPrefix("journal.") }
        #expect(leftovers.sorted() == ["state", "state.lock"], "no half-written temporary")
    }

    @Test(
        "an unreadable state file is left byte for byte; the run refuses before sending anything")
    func unreadableStateIsKept() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("etagbad")
        try Self.writeJob(space, key: key, version: "u")
        let state = space.folder.appendingPathComponent("out/.courier/state")
        try FileManager.default.createDirectory(
            at: state.deletingLastPathComponent(), withIntermediateDirectories: true)
        let bytes = Data(#"{"version": 1, "entries": {"e/1.json": {"etag": "\"u-1\""#.utf8)
        try bytes.write(to: state)

        let result = try await space.run(backend: "curl")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("out/.courier/state"), "\(result.stderr)")
        #expect(result.stderr.contains("Move it aside"), "\(result.stderr)")
        #expect(result.stderr.contains("delete it"), "\(result.stderr)")
        #expect(try Data(contentsOf: state) == bytes, "the file is as it was")
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing sent")
        // The dry run says it as the run would (trial L: it planned in silence, exit 0).
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.status == 2, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stderr.contains("Move it aside"), "\(plan.stderr)")

        // Moved aside, the next run fetches everything and starts a new state.
        try FileManager.default.moveItem(
            at: state, to: state.deletingLastPathComponent().appendingPathComponent("state.old"))
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try await ServerHits.of(key, on: space.server).count == 5)
        #expect(FileManager.default.fileExists(atPath: state.path))
    }

    @Test("conditional needs save")
    func needsSave() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/etag", "conditional": true}"#)
        let result = try await space.run(["--dry-run"], backend: "curl")
        #expect(result.status == 2)
        #expect(result.stderr.contains("tasks[0].conditional: needs \"save\""), "\(result.stderr)")
    }

    /// `conditional` with `paginate`: the first page's validators are kept and sent; its 304
    /// ends the task with every saved page as it was, and later pages never get the first
    /// page's conditions.
    @Test(
        "with paginate, the first page's 304 ends the task; pages 2+ are asked plainly",
        arguments: RunCommandTests.backends)
    func paginated(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("cond-pages-\(backend)")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "7", "size": "3", "etag": "1", "key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "next"}}, "conditional": true, "save": "pages/{page}.json"}
                """#)
        #expect(try await space.run(backend: backend).status == 0)
        let first = try await ServerHits.of(key, on: space.server).requests
        #expect(first.count == 3)
        #expect(first.allSatisfy { $0.header("If-None-Match") == nil })
        let saved = try (1...3).map {
            try Data(contentsOf: space.folder.appendingPathComponent("out/pages/\($0).json"))
        }
        let second = try await space.run(backend: backend)
        #expect(second.status == 0, "\(second.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 4, "one request: the first page, not modified")
        #expect(hits.last?.header("If-None-Match") == #""p0-7""#)
        let line = try #require(try space.attempts("list").last)
        #expect(line["notModified"] as? Bool == true && line["outcome"] as? String == "ok")
        #expect(
            try (1...3).map {
                try Data(contentsOf: space.folder.appendingPathComponent("out/pages/\($0).json"))
            } == saved)
        #expect(!second.stderr.contains("note:"), "the pages had validators")

        // A saved page gone since (the last one, here) is fetched again with the listing:
        // only page 1 was checked, and the page stayed missing for ever (trial L).
        let third = space.folder.appendingPathComponent("out/pages/3.json")
        try FileManager.default.removeItem(at: third)
        let repaired = try await space.run(backend: backend)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        let asked = try await ServerHits.of(key, on: space.server).requests
        #expect(asked.count == 7, "the whole listing again: \(asked.count)")
        #expect(asked[4].header("If-None-Match") == nil, "asked without conditions")
        #expect(try Data(contentsOf: third) == saved[2])
        // And then all is as it was: one conditional request.
        #expect(try await space.run(backend: backend).status == 0)
        let last = try await ServerHits.of(key, on: space.server).requests
        #expect(last.count == 8 && last[7].header("If-None-Match") == #""p0-7""#)
        // A later page cut short in place is fetched again too (trial N: it stayed cut).
        let pageTwo = space.folder.appendingPathComponent("out/pages/2.json")
        try Data().write(to: pageTwo)
        #expect(try await space.run(backend: backend).status == 0)
        let again = try await ServerHits.of(key, on: space.server).requests
        #expect(again.count == 11, "the whole listing again: \(again.count)")
        #expect(try Data(contentsOf: pageTwo) == saved[1])
        // A state an older courier wrote has no page count: a deleted page was not seen, and
        // page 1's 304 kept the listing without it (trial M). Such a listing is fetched whole.
        let stateFile = space.folder.appendingPathComponent("out/.courier/state")
        var state = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: stateFile)) as? [String: Any])
        var entries = try #require(state["entries"] as? [String: [String: Any]])
        #expect(entries["pages/1.json"]?["pages"] as? Int == 3, "\(entries)")
        entries["pages/1.json"]?["pages"] = nil
        entries["pages/1.json"]?["laterPages"] = nil
        state["entries"] = entries
        try JSONSerialization.data(withJSONObject: state).write(to: stateFile)
        try FileManager.default.removeItem(at: third)
        #expect(try await space.run(backend: backend).status == 0)
        let older = try await ServerHits.of(key, on: space.server).requests
        #expect(older.count == 14, "the whole listing again: \(older.count)")
        #expect(older[11].header("If-None-Match") == nil, "asked without conditions")
        #expect(try Data(contentsOf: third) == saved[2])
    }

    /// A listing that failed after its first page had recorded that page's new validators:
    /// the next run's 304 kept a listing of new and old pages for good (trial M). They are
    /// recorded once every page is saved.
    @Test(
        "a listing that fails part-way keeps its old validators; the next run fetches it whole",
        arguments: RunCommandTests.backends)
    func partialListingKeepsOldValidators(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("cond-partial-\(backend)")
        let toggle = FixtureServer.uniqueKey("cond-partial-toggle")
        func writeJob(total: Int) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "list", "path": "/pages", "query": {"style": "link", "total": "\#(total)", "size": "3", "etag": "1", "key": "\#(key)", "fail_start": "6", "fail_until": "\#(toggle)"},
                     "paginate": {"next": {"linkHeader": "next"}}, "conditional": true, "save": "pages/{page}.json"}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        // Two whole pages; then the listing grows, and its third page fails.
        try writeJob(total: 6)
        #expect(try await space.run(backend: backend).status == 0)
        try writeJob(total: 9)
        let failed = try await space.run(backend: backend)
        #expect(failed.status == 1, "\(failed.stderr)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let repaired = try await space.run(backend: backend)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        // Run 3 did not ask with the failed run's first page's validators (its 304 would have
        // kept page 3 from the 6-item listing): the state still held the last whole
        // listing's, for a page 1 rewritten since, so it fetched every page.
        #expect(hits.count == 8, "2 + 3 + 3: \(hits.map(\.path))")
        #expect(hits[5].header("If-None-Match") == nil)
        let third = try String(
            contentsOf: space.folder.appendingPathComponent("out/pages/3.json"), encoding: .utf8)
        #expect(third.contains("\"id\": 8") || third.contains("\"id\":8"), "\(third)")
    }

    /// A cut conditional listing keeps no checkpoint (its pages go together): its `--resume`
    /// fetches it whole from page 1 and records its first page's validators, so the next
    /// night asks once and keeps every page on the 304.
    @Test(
        "a resume of a cut conditional listing fetches it whole and records its validators",
        arguments: RunCommandTests.backends)
    func resumedListingRecordsValidators(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("cond-resumed-\(backend)")
        let toggle = FixtureServer.uniqueKey("cond-resumed-toggle")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "9", "size": "3", "etag": "1", "key": "\#(key)", "fail_start": "6", "fail_until": "\#(toggle)"},
                 "paginate": {"next": {"linkHeader": "next"}}, "conditional": true, "save": "pages/{page}.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let failed = try await space.run(backend: backend)
        #expect(failed.status == 1, "\(failed.stderr)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(!resumed.stderr.contains("goes on from page"), "\(resumed.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 6, "pages 1-3, twice")
        let next = try await space.run(backend: backend)
        #expect(next.status == 0, "\(next.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 7, "one request, not modified: \(hits.map(\.path))")
        #expect(hits.last?.header("If-None-Match") == #""p0-9""#)
        #expect(try space.attempts("list").last?["notModified"] as? Bool == true)
    }

    @Test("a server that sends no validators gets one note per task")
    func noValidatorsNote() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "plain-{n}", "path": "/echo", "query": {"n": "{n}"}, "foreach": {"n": {"range": [1, 3]}}, "conditional": true, "save": "plain/{n}.json"}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        let notes = result.stderr.split(separator: "\n").filter { $0.contains("note:") }
        #expect(notes.count == 1, "\(result.stderr)")
        #expect(
            notes.first?.hasSuffix(
                "(tasks[0]) is conditional, but the server sent neither ETag nor Last-Modified: the next run cannot ask whether it changed, and fetches it whole"
            ) == true, "\(result.stderr)")
    }
}
