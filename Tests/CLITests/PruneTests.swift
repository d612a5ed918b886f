import CourierTestSupport
import Foundation
import Testing

/// `prune` (issue 28, item 4): saved files whose item the parent no longer lists, listed or
/// moved aside after a complete run, never after a partial one.
@Suite("prune")
struct PruneTests {
    static func writeJob(
        _ space: JobWorkspace, key: String, mode: String, size: Int = 100, failPage: Int? = nil
    )
        throws
    {
        let fail = failPage.map { #", "fail_page": "\#($0)""# } ?? ""
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/store/items", "query": {"key": "\#(key)", "size": "\#(size)"\#(fail)},
                 "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/echo", "query": {"id": "{id}"}, "foreach": {"id": {"capture": "ids"}},
                 "save": "items/{id}.json", "prune": \#(mode)}
                """#)
    }

    static func saved(_ space: JobWorkspace) -> [String] {
        let folder = space.folder.appendingPathComponent("out/items")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test(
        "move: a gone item's file is moved aside after a complete run, and kept after a partial one",
        arguments: RunCommandTests.backends)
    func move(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("prune-\(backend)")
        try await SinceCursorTests.put(
            (1...4).map { SinceCursorTests.record($0, "0\($0)", name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key, mode: #""move""#)
        var result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.saved(space) == ["1.json", "2.json", "3.json", "4.json"])
        #expect(!result.stderr.contains("prune:"), "nothing is gone")
        let second = try Data(contentsOf: space.folder.appendingPathComponent("out/items/2.json"))

        try await SinceCursorTests.put([#"{"id": 2, "_remove": true}"#], key: key, on: space)
        result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.saved(space) == ["1.json", "3.json", "4.json"])
        let run = try #require(
            try space.logLines().last { $0["event"] as? String == "run.start" }?["run"] as? String)
        let moved = space.folder.appendingPathComponent("out/.courier/pruned/\(run)/items/2.json")
        #expect(try Data(contentsOf: moved) == second, "moved, byte for byte")
        let list = try String(
            contentsOf: space.folder.appendingPathComponent("out/.courier/pruned/\(run).list"),
            encoding: .utf8)
        #expect(list == "items/2.json -> .courier/pruned/\(run)/items/2.json\n")
        #expect(
            result.stderr.contains(
                "courier: prune: out/items/2.json -> .courier/pruned/\(run)/items/2.json (tasks[1]): its item is no longer listed"
            ), "\(result.stderr)")

        // A listing that fails on its second page saw part of the items at most.
        try await SinceCursorTests.put([#"{"id": 3, "_remove": true}"#], key: key, on: space)
        try Self.writeJob(space, key: key, mode: #""move""#, size: 1, failPage: 2)
        result = try await space.run(backend: backend)
        #expect(result.status == 1)
        #expect(Self.saved(space) == ["1.json", "3.json", "4.json"])
        #expect(result.stderr.contains("courier: prune: skipped"), "\(result.stderr)")
    }

    @Test("true lists and moves nothing; prune needs a fan-out with save")
    func listOnly() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("prune-list")
        try await SinceCursorTests.put(
            (1...3).map { SinceCursorTests.record($0, "0\($0)", name: "r\($0)") }, key: key,
            on: space)
        try Self.writeJob(space, key: key, mode: "true")
        #expect(try await space.run(backend: "curl").status == 0)
        try await SinceCursorTests.put([#"{"id": 1, "_remove": true}"#], key: key, on: space)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0)
        #expect(Self.saved(space) == ["1.json", "2.json", "3.json"], "listed, not moved")
        #expect(
            result.stderr.contains("courier: prune: out/items/1.json (tasks[1])"),
            "\(result.stderr)")

        try space.writeJob(tasks: #"{"id": "a", "path": "/echo", "save": "a.json", "prune": true}"#)
        let refused = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains("tasks[0].prune: needs a task that fans out over a capture"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("or a paginated task saving each page"))
    }

    /// A listing that got shorter left its last pages' files from the night before, which a
    /// reader of `pages/*.json` took for current (trial J): a paginated task's `prune` names
    /// (and moves) the pages past the last one a complete run saved.
    @Test(
        "a paginated task's prune moves the pages past the listing's end",
        arguments: RunCommandTests.backends)
    func pagesPastTheEnd(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("prune-pages-\(backend)")
        try await SinceCursorTests.put(
            (1...6).map { SinceCursorTests.record($0, "0\($0)", name: "r\($0)") }, key: key,
            on: space)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/store/items", "query": {"key": "\#(key)", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}}, "save": "pages/{page}.json", "prune": "move"}
                """#)
        func pages() -> [String] {
            let folder = space.folder.appendingPathComponent("out/pages")
            return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .sorted()
        }
        var result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(pages() == ["1.json", "2.json", "3.json"])
        #expect(!result.stderr.contains("prune:"), "nothing is gone")
        let third = try Data(contentsOf: space.folder.appendingPathComponent("out/pages/3.json"))

        // A user's own files beside the pages are no page: `{page}` is a page number.
        for name in ["index.json", "07.json"] {
            try Data("mine".utf8).write(
                to: space.folder.appendingPathComponent("out/pages/\(name)"))
        }
        try await SinceCursorTests.put(
            [#"{"id": 5, "_remove": true}"#, #"{"id": 6, "_remove": true}"#], key: key, on: space)
        result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(pages() == ["07.json", "1.json", "2.json", "index.json"])
        #expect(result.stderr.contains("a page past the listing's end"), "\(result.stderr)")
        let run = try #require(
            try space.logLines().last { $0["event"] as? String == "run.start" }?["run"] as? String)
        let moved = space.folder.appendingPathComponent("out/.courier/pruned/\(run)/pages/3.json")
        #expect(try Data(contentsOf: moved) == third, "moved, byte for byte")

        // An incremental listing lists only what changed: its pages cannot be pruned.
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "since": "{since}"},
                 "since": {"max": "/items/*/updated_at", "start": "0"},
                 "paginate": {"next": {"linkHeader": "next"}}, "save": "pages/{page}.json", "prune": true}
                """#)
        let refused = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains("tasks[0].prune: cannot follow an incremental listing"),
            "\(refused.stderr)")
    }
}
