import CourierTestSupport
import Foundation
import Testing

/// The job runner sends exactly what the job file says, refuses what would change the request's
/// meaning on the wire, and never crashes on what a user may write.
@Suite("request fidelity")
struct RequestFidelityTests {
    @Test("CR/LF from a foreach list or a lines file is refused before anything is sent")
    func headerInjectionFromExpansion() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("inject")
        try "fine\nx\rX-Injected: yes\n".write(
            to: space.folder.appendingPathComponent("values.txt"), atomically: true,
            encoding: .utf8)
        let cases = [
            #"{"id": "l{v}", "path": "/echo", "query": {"key": "\#(key)"}, "headers": {"X-V": "{v}"}, "foreach": {"v": ["ok", "x\r\nX-Injected: yes"]}}"#,
            #"{"id": "f{v}", "path": "/echo", "query": {"key": "\#(key)"}, "headers": {"X-V": "{v}"}, "foreach": {"v": {"lines": "values.txt"}}}"#,
            #"{"id": "u{v}", "path": "/echo", "query": {"key": "\#(key)"}, "headers": {"{v}": "1"}, "foreach": {"v": ["X-Fine", "Bad Name"]}}"#,
        ]
        for tasks in cases {
            try space.writeJob(tasks: tasks)
            let result = try await space.run(backend: "curl")
            #expect(result.status == 2, "\(tasks): \(result.stderr)")
            #expect(result.stderr.contains("tasks[0].headers"), "\(result.stderr)")
        }
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing was sent")
    }

    @Test(
        "a bare % in a path or a lines value is sent encoded", arguments: RunCommandTests.backends)
    func percentNeverCrashes(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("pct")
        try "50%off\n100%25\n".write(
            to: space.folder.appendingPathComponent("q.txt"), atomically: true, encoding: .utf8)
        try space.writeJob(
            tasks: #"""
                {"id": "path", "path": "/sale/50%", "query": {"key": "\#(key)"}, "expect": {"status": [404]}},
                {"id": "q{q}", "path": "/echo", "query": {"key": "\#(key)", "q": "{q}"}, "foreach": {"q": {"lines": "q.txt"}}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let paths = try await ServerHits.of(key, on: space.server).requests.map(\.path).sorted()
        #expect(
            paths == [
                "/echo?key=\(key)&q=100%2525", "/echo?key=\(key)&q=50%25off",
                "/sale/50%25?key=\(key)",
            ])
    }

    @Test("JSON numbers, raw bodies and body files reach the server byte for byte")
    func bodiesAreSentUnchanged() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("bytes")
        let fileBody = "line one\r\nzwei: ü\n\ttabbed {not json}"
        try fileBody.write(
            to: space.folder.appendingPathComponent("body.txt"), atomically: true, encoding: .utf8)
        try space.writeJob(
            tasks: #"""
                {"id": "json", "method": "POST", "path": "/echo", "query": {"key": "\#(key)", "t": "json"},
                 "json": {"lat": 52.520008, "tiny": 0.0001, "small": 1e-7, "id": 9223372036854775808, "huge": 1e400, "neg": -0, "list": [1.10, 2E5]}},
                {"id": "raw", "method": "POST", "path": "/echo", "query": {"key": "\#(key)", "t": "raw"}, "body": "a=1&b=%41+x"},
                {"id": "file", "method": "PUT", "path": "/echo", "query": {"key": "\#(key)", "t": "file"}, "bodyFile": "body.txt"}
                """#)
        for backend in RunCommandTests.backends {
            let result = try await space.run(backend: backend)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 6)
        for hit in hits {
            if hit.path.hasSuffix("t=json") {
                #expect(
                    hit.body
                        == #"{"lat":52.520008,"tiny":0.0001,"small":1e-7,"id":9223372036854775808,"huge":1e400,"neg":-0,"list":[1.10,2E5]}"#
                )
                #expect(hit.header("Content-Type") == "application/json")
            } else if hit.path.hasSuffix("t=raw") {
                #expect(hit.body == "a=1&b=%41+x")
                #expect(hit.header("Content-Type") == nil, "no form type added to a raw body")
            } else {
                #expect(hit.body == fileBody)
            }
        }
    }

    @Test("a password in baseURL is sent as Basic auth and written nowhere")
    func urlPasswordIsASecret() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("userinfo")
        let password = "pw-\(UUID().uuidString)"
        let base = "http://bob:\(password)@127.0.0.1:\(space.server.port)"
        let job =
            #"{"version": 1, "name": "e2e", "baseURL": "\#(base)", "tasks": [{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}}, {"id": "b", "url": "http://eve:\#(password)@127.0.0.1:\#(space.server.port)/status/500"}]}"#
        try job.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("GET http://127.0.0.1:\(space.server.port)/echo?key=\(key)"))
        let result = try await space.run(backend: "urlsession")
        #expect(result.status == 1, "task b fails with 500: \(result.stderr)")
        let hit = try #require(try await ServerHits.of(key, on: space.server).requests.first)
        let basic = Data("bob:\(password)".utf8).base64EncodedString()
        #expect(hit.header("Authorization") == "Basic \(basic)")
        let written =
            try space.everyWrittenByte()
            + Data((plan.stdout + plan.stderr + result.stdout + result.stderr).utf8)
        #expect(written.range(of: Data(password.utf8)) == nil, "the password leaked")
        #expect(written.range(of: Data(basic.utf8)) == nil, "the Basic credentials leaked")
        #expect(
            try space.attempts("b").first?["url"] as? String
                == "http://127.0.0.1:\(space.server.port)/status/500")
    }

    @Test("a redirected request logs where it ended", arguments: RunCommandTests.backends)
    func finalURLIsLogged(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "hop", "path": "/chain", "query": {"n": "2"}}"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(try space.attempts("hop").first)
        #expect(line["url"] as? String == space.server.url("/chain?n=2").absoluteString)
        #expect(line["finalURL"] as? String == space.server.url("/chain?n=0").absoluteString)
        #expect(line["redirects"] as? Int == 2)
        #expect(line["status"] as? Int == 200)
    }
}
