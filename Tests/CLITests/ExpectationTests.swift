import CourierTestSupport
import Foundation
import Testing

/// `expect.json`, `expect.headers`, `expect.bodyContains`, `expect.maxMs`, and polling with
/// `retry.onExpectation`.
@Suite("expectations")
struct ExpectationTests {
    @Test("every kind passes when met", arguments: RunCommandTests.backends)
    func passing(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "all", "path": "/echo", "query": {"a": "1"}, "save": "all.json",
                 "expect": {"status": [200], "json": {"/method": "GET", "/query": "a=1", "/bodyLength": 0, "/headers/0/0": "Host"},
                            "headers": {"Content-Type": "application/*"}, "bodyContains": ["\"method\"", "GET"], "maxMs": 20000}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try space.attempts("all").first?["savedTo"] as? String == "out/all.json")
    }

    @Test("each kind fails with what was expected and what came")
    func failing() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "json", "path": "/echo", "expect": {"json": {"/method": "POST"}}, "save": "never.json"},
                {"id": "missing", "path": "/echo", "expect": {"json": {"/nothing/here": 1}}},
                {"id": "header", "path": "/echo", "expect": {"headers": {"Content-Type": "text/*"}}},
                {"id": "noheader", "path": "/echo", "expect": {"headers": {"X-Absent": "*"}}},
                {"id": "body", "path": "/echo", "expect": {"bodyContains": "zebra"}},
                {"id": "slow", "path": "/slow", "query": {"ms": "400"}, "expect": {"maxMs": 100}},
                {"id": "notjson", "path": "/status/200", "expect": {"json": {"/a": 1}}}
                """#, extra: #""retry": {"maxAttempts": 3, "initialDelay": 0.01},"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        let expected = [
            "json": #"expected /method to be "POST", found "GET""#,
            "missing": "expected /nothing/here to be 1, found nothing there",
            "header": #"expected header Content-Type matching "text/*", found "application/json""#,
            "noheader": #"expected header X-Absent matching "*", found no such header"#,
            "body": #"expected the body to contain "zebra"; it does not"#,
            "slow": "more than maxMs 100",
            "notjson": "the body is not JSON",
        ]
        for (task, message) in expected {
            let attempts = try space.attempts(task)
            #expect(attempts.count == 1, "\(task): not retried without onExpectation")
            let error = attempts.last?["error"] as? [String: String]
            #expect(error?["kind"] == "expectation", "\(task)")
            #expect(error?["message"]?.contains(message) == true, "\(task): \(error ?? [:])")
            #expect(result.stderr.contains("task \(task) failed"), "\(task)")
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/never.json").path))
    }

    @Test("retry.onExpectation polls until a field flips", arguments: RunCommandTests.backends)
    func polling(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("poll")
        // /flaky with status=200 answers {"ok": false} twice, then {"ok": true}.
        try space.writeJob(
            tasks:
                #"{"id": "job", "path": "/flaky", "query": {"key": "\#(key)", "fail": "2", "status": "200"}, "expect": {"json": {"/ok": true}}}"#,
            extra:
                #""retry": {"maxAttempts": 5, "initialDelay": 0.05, "jitter": false, "onExpectation": true},"#
        )
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            try space.attempts("job").map { $0["outcome"] as? String } == ["retry", "retry", "ok"])
        #expect(try await ServerHits.of(key, on: space.server).count == 3)
    }

    @Test("bad expectations are exit-2 errors naming the place")
    func badExpectations() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/echo", "expect": {"json": {"status": 1}, "bodyContains": 3, "maxMs": 0, "headers": {"Bad Name": "x"}, "other": 1}}
                """#)
        let result = try await space.run(["--dry-run"], backend: "curl")
        #expect(result.status == 2)
        for message in [
            #"tasks[0].expect.json: "status" is not a JSON Pointer"#,
            "tasks[0].expect.bodyContains: expected a string or an array of strings",
            "tasks[0].expect.maxMs: expected milliseconds greater than 0",
            #"tasks[0].expect.headers: "Bad Name" is not a header name"#,
            "tasks[0].expect.other",
        ] {
            #expect(result.stderr.contains(message), "\(message) in \(result.stderr)")
        }
    }
}
