import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `records` shaped (`where`, `select`, `drop`, `rename`, `add`) through a fan-out, killed
/// with SIGKILL mid-run and resumed: the files are a clean run's, byte for byte.
@Suite("records shaping")
struct RecordShapingTests {
    static func writeJob(_ space: JobWorkspace, key: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "ids", "path": "/records/ids", "query": {"key": "\#(key)"},
                 "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "user-{id}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}},
                 "records": {"from": "", "to": "records/users.jsonl", "write": "merge", "key": "/id",
                             "deleted": "/deleted", "select": ["id", "name"], "rename": {"name": "login"},
                             "add": {"parent": "{id}", "via": "user-{id}"}}},
                {"id": "pages", "path": "/records/list", "query": {"key": "\#(key)", "size": "4"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "records/named.jsonl", "write": "replace",
                             "where": {"/name": "user 3"}, "drop": ["v"]}}
                """#,
            extra: #""concurrency": 2, "retry": {"maxAttempts": 1},"#)
    }

    @Test(
        "a shaped fan-out, killed and resumed, ends as a clean run does",
        arguments: RunCommandTests.backends)
    func killThenResume(backend: String) async throws {
        let key = FixtureServer.uniqueKey("shape")
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let space = try JobWorkspace()
        defer { space.remove() }
        for workspace in [clean, space] { try Self.writeJob(workspace, key: key) }
        try RecordsTests.set(key, RecordsTests.items(1), on: space.server)
        for workspace in [clean, space] {
            let run = try await workspace.run(backend: backend)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let first = RecordsTests.recordFiles(space)
        #expect(first == RecordsTests.recordFiles(clean))
        #expect(first["named.jsonl"] == #"{"id":3,"name":"user 3"}"# + "\n")
        let users = try #require(first["users.jsonl"]).split(separator: "\n")
        #expect(users.first == #"{"id":2,"login":"user 2","parent":2,"via":"user-2"}"#)
        #expect(users.count == 24 - 4, "the tombstones of ids 1, 8, 15 and 22 wrote nothing")

        // Slow enough (31 requests, 1.5 s each, 2 at a time: 20 s or more) that the kill lands
        // mid-run however late a loaded machine lets this test send it.
        try RecordsTests.set(key, RecordsTests.items(2), delayMs: 1500, on: space.server)
        let earlier = RecordsTests.logNames(space)
        let running = try RecoveryMatrixTests.launch(["run", "job.json"], space, backend: backend)
        try await RecoveryMatrixTests.waitForRequests(6, in: space, besides: earlier)
        running.send(SIGKILL)
        _ = await running.wait(seconds: 300)
        #expect(RecordsTests.recordFiles(space) == first, "a killed run changes no records file")
        try RecordsTests.set(key, RecordsTests.items(2), on: space.server)
        let resumed = try await space.run(["--resume"], backend: backend)
        #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
        let whole = try await clean.run(backend: backend)
        #expect(whole.status == 0, "\(whole.stderr)")
        let expected = RecordsTests.recordFiles(clean)
        let got = RecordsTests.recordFiles(space)
        #expect(
            got == expected,
            "differ: \(Set(got.keys).union(expected.keys).filter { got[$0] != expected[$0] }.sorted())"
        )
        #expect(got["users.jsonl"]?.contains(#""parent":2,"via":"user-2""#) == false, "2 deleted")
    }
}
