import CourierTestSupport
import Foundation
import Testing

/// A server that echoes credentials back (in a header, in the body an expectation quotes)
/// gets none of them into any byte courier writes, in any form: whole, cut, or derived.
@Suite("echoed secrets")
struct EchoedSecretTests {
    @Test(
        "echoed Basic, bearer and literal credentials reach no byte written, whole or cut",
        arguments: RunCommandTests.backends)
    func echoedCredentials(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // Longer than the 117 characters an expectation message keeps of a value.
        let token = "tok" + String(repeating: "Q7x", count: 60) + UUID().uuidString
        let password = "pw-\(UUID().uuidString)"
        let literal = "lit-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "bearer", "path": "/echo-auth", "auth": {"bearer": "${env:TOKEN}"},
                 "expect": {"json": {"/authorization": "something else"}}},
                {"id": "basic", "path": "/echo-auth", "auth": {"basic": {"user": "alice", "password": "${env:PW}"}}},
                {"id": "literal", "path": "/echo-auth", "headers": {"Authorization": "Bearer \#(literal)"}},
                {"id": "encoded", "path": "/echo-auth-redirect", "auth": {"bearer": "${env:TOKEN}"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let run = try await space.run(
            backend: backend, environment: ["TOKEN": token, "PW": password])
        #expect(run.status == 1, "the bearer task's expectation fails: \(run.stdout) \(run.stderr)")
        let failed = try #require(try space.attempts("bearer").last)
        let message = (failed["error"] as? [String: String])?["message"] ?? ""
        #expect(message.contains("found \"Bearer <redacted>\""), "\(message)")
        let report = try await CourierBinary.run(
            [
                "report", space.logs.path, "--junit", "report.xml", "--html", "report.html",
            ], directory: space.folder)
        // The redirect's state: the token base64-encoded after 13 bytes; a run of its
        // characters that only the token's bytes decide.
        let state = Data("auth: Bearer \(token)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let forms = [
            token, String(token.prefix(40)), password, literal,
            Data("alice:\(password)".utf8).base64EncodedString(),
            String(state.dropFirst(24).prefix(40)),
        ]
        let written =
            String(decoding: try space.everyWrittenByte(), as: UTF8.self) + run.stdout
            + run.stderr + report.stdout + report.stderr
        for form in forms {
            #expect(!written.contains(form), "\(form.prefix(12))… was written")
        }
    }
}

/// A secret that occurs in the log's own fields does not corrupt the log.
@Suite("secrets and the log's structure")
struct SecretsInTheLogStructureTests {
    @Test("a secret equal to the year, the job's name or an id prefix leaves the log readable")
    func secretsEqualToStructure() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let year = String(Calendar(identifier: .gregorian).component(.year, from: Date()))
        let key = FixtureServer.uniqueKey("structure")
        try space.writeJob(
            name: "acme",
            tasks: #"""
                {"id": "user-{n}", "path": "/echo", "query": {"key": "\#(key)", "y": "${env:PIN}", "j": "${env:JOBNAME}", "u": "${env:PREFIX}"},
                 "foreach": {"n": [1, 2, 3]}}
                """#)
        let environment = ["PIN": year, "JOBNAME": "acme", "PREFIX": "user"]
        let first = try await space.run(backend: "curl", environment: environment)
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        let lines = try space.logLines(job: "acme")
        LogContract.check(lines)
        #expect(lines.allSatisfy { ($0["ts"] as? String)?.hasPrefix(year) == true })
        #expect(lines.allSatisfy { $0["job"] as? String == "acme" })
        let tasks = Set(lines.compactMap { $0["task"] as? String })
        #expect(tasks == ["user-1", "user-2", "user-3"])
        // The values the requests carried are still redacted.
        let request = try #require(lines.first { $0["event"] as? String == "request" })
        #expect((request["url"] as? String)?.contains("y=<redacted>") == true)
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("acme").path, "--json"],
            directory: space.folder)
        #expect(report.stdout.contains(#""ok":3"#), "\(report.stdout.prefix(400))")
        let resume = try await space.run(["--resume"], backend: "curl", environment: environment)
        #expect(resume.stdout.contains("0 requests"), "nothing re-sent: \(resume.stdout)")
        #expect(try await ServerHits.of(key, on: space.server).count == 3)
    }

    @Test("a value that puts a secret in a task's id makes no task, and the log never holds it")
    func secretInAnID() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let secret = "idsecret-\(UUID().uuidString)"
        try Data("plain\n\(secret)\n".utf8).write(
            to: space.folder.appendingPathComponent("ids.txt"))
        try space.writeJob(
            tasks: #"""
                {"id": "t-{v}", "path": "/echo", "query": {"s": "${env:SECRET}"},
                 "foreach": {"v": {"lines": "ids.txt"}}}
                """#)
        // Values known when the file is read are checked then: nothing is sent.
        let run = try await space.run(backend: "curl", environment: ["SECRET": secret])
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("the task's id would hold a secret"), "\(run.stderr)")
        #expect(!(run.stdout + run.stderr).contains(secret))
        // The input holds it, by design; nothing courier wrote does.
        try FileManager.default.removeItem(at: space.folder.appendingPathComponent("ids.txt"))
        #expect(try space.everyWrittenByte().range(of: Data(secret.utf8)) == nil)

        // A value captured while running: the task is not built, its line says the id
        // redacted.
        let key = FixtureServer.uniqueKey("idsecret")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/json", "query": {"key": "\#(key)", "v": "{{\"ids\": [\"plain\", \"\#(secret)\"]}}"},
                 "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "t-{v}", "path": "/echo", "query": {"s": "${env:SECRET}"},
                 "foreach": {"v": {"capture": "ids"}}}
                """#)
        let captured = try await space.run(backend: "curl", environment: ["SECRET": secret])
        #expect(captured.status == 1, "\(captured.stdout)\(captured.stderr)")
        let tasks = Set(try space.logLines().compactMap { $0["task"] as? String })
        #expect(tasks == ["list", "t-plain", "t-<redacted>"], "\(tasks)")
        #expect(!(captured.stdout + captured.stderr).contains(secret))
        #expect(try space.everyWrittenByte().range(of: Data(secret.utf8)) == nil)
    }

    @Test("a secret too short to redact safely is warned about")
    func shortSecretWarning() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "headers": {"X-Api-Key": "${env:SHORT}"}}"#)
        let result = try await space.run(backend: "curl", environment: ["SHORT": "abc"])
        #expect(result.status == 0)
        #expect(
            result.stderr.contains("1 secret value is shorter than 4 characters"),
            "\(result.stderr)")
        let written = String(decoding: try space.everyWrittenByte(), as: UTF8.self)
        #expect(written.contains(#""X-Api-Key":"<redacted>""#), "a secret header is redacted whole")
    }

    /// A trial's cron setup left `API_TOKEN=` empty: `Bearer ` went out, exit 0, not a word.
    @Test("an empty secret is warned about, on a terminal or not")
    func emptySecretWarning() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "auth": {"bearer": "${env:API_TOKEN}"}}"#)
        let empty = try await space.run(backend: "curl", environment: ["API_TOKEN": ""])
        #expect(empty.status == 0)
        #expect(
            empty.stderr.contains("warning: ${env:API_TOKEN} is empty"), "\(empty.stderr)")
        let set = try await space.run(backend: "curl", environment: ["API_TOKEN": "token-1234"])
        #expect(!set.stderr.contains("is empty"), "\(set.stderr)")
    }
}
