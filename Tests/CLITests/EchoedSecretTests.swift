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
                {"id": "literal", "path": "/echo-auth", "headers": {"Authorization": "Bearer \#(literal)"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let run = try await space.run(backend: backend, environment: ["TOKEN": token, "PW": password])
        #expect(run.status == 1, "the bearer task's expectation fails: \(run.stdout) \(run.stderr)")
        let failed = try #require(try space.attempts("bearer").last)
        let message = (failed["error"] as? [String: String])?["message"] ?? ""
        #expect(message.contains("found \"Bearer <redacted>\""), "\(message)")
        let report = try await CourierBinary.run(
            [
                "report", space.logs.path, "--junit", "report.xml", "--html", "report.html",
            ], directory: space.folder)
        let forms = [
            token, String(token.prefix(40)), password, literal,
            Data("alice:\(password)".utf8).base64EncodedString(),
        ]
        let written =
            String(decoding: try space.everyWrittenByte(), as: UTF8.self) + run.stdout
            + run.stderr + report.stdout + report.stderr
        for form in forms {
            #expect(!written.contains(form), "\(form.prefix(12))… was written")
        }
    }
}
