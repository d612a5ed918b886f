import CourierTestSupport
import Foundation
import Testing

/// `checks`: a run whose tasks all succeed but whose data is wrong (no rows, a storm of
/// retries, a cursor that stopped moving) exits 4, pings failure and says which check failed;
/// on both backends, and against Datasette.
@Suite("checks")
struct DataCheckTests {
    @Test(
        "a sync that keeps no records exits 4 and pings failure",
        arguments: RunCommandTests.backends)
    func noRecords(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("checks-\(backend)")
        let check = PingRunTests.Check("checks-ping-\(backend)", on: space.server)
        try RecordsTests.set(key, [], on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/list", "query": {"key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "items.jsonl", "write": "replace"},
                 "checks": {"minRecords": 1}}
                """#,
            extra: PingRunTests.notify + #""checks": {"minRecords": 2},"#)
        let environment = ["HC_PING_URL": check.url()]
        let empty = try await space.run(["--json"], backend: backend, environment: environment)
        #expect(empty.status == 4, "\(empty.stderr)")
        #expect(
            empty.stderr.contains(
                "check checks.minRecords failed: the run kept 0 records, fewer than 2"),
            "\(empty.stderr)")
        #expect(
            empty.stderr.contains(
                "check tasks[0].checks.minRecords failed: task list kept 0 records, fewer than 1"))
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [String: Any])
        let failed = try #require(summary["checksFailed"] as? [[String: String]])
        #expect(failed.map { $0["check"] } == ["checks.minRecords", "tasks[0].checks.minRecords"])
        #expect(try await check.paths() == ["/start", "/4"], "the failure ping, with its code")
        let end = try #require(try space.logLines().last)
        #expect(end["exitCode"] as? Int == 4)
        #expect((end["checks"] as? [[String: String]])?.count == 2, "\(end)")
        // The report says which checks failed, in text and JSON.
        let log = space.logs.appendingPathComponent("e2e").path
        let report = try await CourierBinary.run(["report", log])
        #expect(
            report.stdout.contains(
                "(exit 4); data checks failed: checks.minRecords: the run kept 0 records"),
            "\(report.stdout)")
        let json = try await ReportCompletenessTests.jsonReport([log])
        let row = try #require((json["runTable"] as? [[String: Any]])?.last)
        #expect((row["checksFailed"] as? [String])?.count == 2, "\(row)")

        // A resume has nothing to send, and counts the records the night's `ok` lines say it
        // kept: the verdict stands (a cron wrapper that resumes on failure does not turn it
        // into success).
        let resumed = try await space.run(["--resume"], backend: backend, environment: environment)
        #expect(resumed.status == 4, "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            resumed.stderr.contains("check checks.minRecords failed: the run kept 0 records"),
            "\(resumed.stderr)")

        // One record: the task's minimum is met, the job's is not.
        try RecordsTests.set(key, [#"{"id": 1}"#], on: space.server)
        let one = try await space.run(backend: backend, environment: environment)
        #expect(one.status == 4, "\(one.stderr)")
        #expect(one.stdout.contains("data checks failed: checks.minRecords"), "\(one.stdout)")
        #expect(!one.stderr.contains("tasks[0].checks.minRecords"), "\(one.stderr)")

        try RecordsTests.set(key, [#"{"id": 1}"#, #"{"id": 2}"#], on: space.server)
        let two = try await space.run(backend: backend, environment: environment)
        #expect(two.status == 0, "\(two.stdout)\(two.stderr)")
        #expect(!two.stdout.contains("data checks failed"))
    }

    /// Trial NNN: a night whose other task failed never judged `minRecords` (its tasks failed:
    /// exit 1), and its resume, which found the listing done, did not either: a night that
    /// kept no records ended in success. The resume counts what the night's `ok` lines say
    /// its tasks kept, and judges the night's total.
    @Test("a resume judges minRecords over the records the night kept", arguments: [0, 2])
    func resumeCountsTheNightsRecords(records: Int) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("checks-resume")
        let gate = FixtureServer.uniqueKey("checks-resume-gate")
        try RecordsTests.set(key, (0..<records).map { #"{"id": \#($0)}"# }, on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "gate", "path": "/toggle", "query": {"name": "\#(gate)"}},
                {"id": "list", "path": "/records/list", "query": {"key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "items.jsonl", "write": "merge", "key": "/id"}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "checks": {"minRecords": 1},"#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "\(night.stdout)\(night.stderr)")
        let listed = try space.logLines().last {
            $0["task"] as? String == "list" && $0["outcome"] as? String == "ok"
        }
        #expect(listed?["recordsKept"] as? Int == records, "\(String(describing: listed))")
        await WritesOnceRunTests.toggle(gate, on: space)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == (records == 0 ? 4 : 0), "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            resumed.stderr.contains("check checks.minRecords failed: the run kept 0 records")
                == (records == 0), "\(resumed.stderr)")
    }

    /// Trial PPP: a resume of an older night whose failed records task a later night did
    /// took that task as done without the records its line said it kept, and did not judge
    /// `minRecords` at all: exit 0 after a night and a next night that each failed it.
    @Test("a resume of an older night counts the records of tasks a later night did")
    func resumeOfAnOlderNightCountsLaterRecords() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("checks-older")
        let other = FixtureServer.uniqueKey("checks-older-b")
        try RecordsTests.set(key, [#"{"id": 1}"#, #"{"id": 2}"#], on: space.server)
        try RecordsTests.set(other, [#"{"id": 3}"#], fail: true, on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/records/list", "query": {"key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "a.jsonl", "write": "merge", "key": "/id"}},
                {"id": "b", "path": "/records/list", "query": {"key": "\#(other)"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "records": {"from": "/items/*", "to": "b.jsonl", "write": "merge", "key": "/id"}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "checks": {"minRecords": 100},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let night = try #require(try ReplayTests.logFiles(space).first)
        try RecordsTests.set(other, [#"{"id": 3}"#], on: space.server)
        #expect(try await space.run(backend: "curl").status == 4, "the next night fails it")
        let resumed = try await space.run(["--resume", night], backend: "curl")
        #expect(resumed.status == 4, "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            resumed.stderr.contains("check checks.minRecords failed: the run kept 3 records"),
            "\(resumed.stderr)")
    }

    @Test("retries that rescue every task still fail maxErrorRate")
    func errorRate() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("checks-rate")
        try space.writeJob(
            tasks: #"""
                {"id": "t{n}", "path": "/flaky", "query": {"key": "\#(key)-{n}", "fail": "1"},
                 "foreach": {"n": {"range": [1, 4]}}, "retry": {"initialDelay": 0.01}},
                {"id": "fine", "path": "/echo"}
                """#,
            extra: #""checks": {"maxErrorRate": 0.25},"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 4, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stderr.contains(
                "check checks.maxErrorRate failed: 4 of 9 requests failed or were retried (44.4 %), more than 25 %"
            ), "\(result.stderr)")
        #expect(result.stdout.contains("5 tasks, 5 ok, 0 failed, 9 requests"), "\(result.stdout)")
    }

    @Test("a cursor that stopped moving fails maxCursorAge; a fresh one passes")
    func cursorAge() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("checks-age")
        try RecordsTests.set(
            key, [#"{"id": 1, "updated_at": "2020-01-01T00:00:00Z"}"#], on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "changes", "path": "/records/list", "query": {"key": "\#(key)", "since": "{since}"},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"}, "save": "changes.json"}
                """#,
            extra: #""checks": {"maxCursorAge": 86400},"#)
        let stale = try await space.run(backend: "curl")
        #expect(stale.status == 4, "\(stale.stdout)\(stale.stderr)")
        #expect(
            stale.stderr.contains(
                "check checks.maxCursorAge failed: the newest cursor, 2020-01-01T00:00:00Z (task changes)"
            ), "\(stale.stderr)")
        let now = ISO8601DateFormatter().string(from: Date())
        try RecordsTests.set(key, [#"{"id": 2, "updated_at": "\#(now)"}"#], on: space.server)
        let fresh = try await space.run(backend: "curl")
        #expect(fresh.status == 0, "\(fresh.stdout)\(fresh.stderr)")
    }

    @Test("a Datasette table that returns no rows fails minRecords; rows make it pass")
    func datasette() async throws {
        let sync = try DatasetteSyncTests.Sync("checks")
        defer { sync.space.remove() }
        try await sync.put([(1, 1, "r1")])
        try await sync.change("delete", ["1"])
        try #"""
        {"version": 1, "name": "ds", "baseURL": "\#(sync.base.absoluteString)", "outputDir": "out",
         "checks": {"minRecords": 1}, "tasks": [
         {"id": "rows", "path": "/store/\#(sync.table).json", "query": {"_shape": "array"},
          "records": {"from": "/*", "to": "rows.jsonl", "write": "replace"}}
        ]}
        """#.write(
            to: sync.space.folder.appendingPathComponent("job.json"), atomically: true,
            encoding: .utf8)
        let empty = try await sync.run("curl")
        #expect(empty.status == 4, "\(empty.stdout)\(empty.stderr)")
        #expect(empty.stderr.contains("the run kept 0 records, fewer than 1"), "\(empty.stderr)")
        try await sync.put([(2, 2, "r2"), (3, 3, "r3")])
        let full = try await sync.run("urlsession")
        #expect(full.status == 0, "\(full.stdout)\(full.stderr)")
    }
}
