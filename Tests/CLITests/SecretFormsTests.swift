import CourierTestSupport
import Foundation
import Testing

/// Secrets with characters that get escaped (space, `"`, `\`, `@`, `%`, `+`) are removed from
/// every byte courier writes, in every form: raw, JSON-escaped and percent-encoded in full or in
/// part.
@Suite("secrets in every encoding")
struct SecretFormsTests {
    @Test("an awkward secret is written nowhere, in any form", arguments: RunCommandTests.backends)
    func awkwardSecret(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("forms")
        // Every form of the secret still holds its unique tail verbatim, so finding the tail
        // anywhere is a leak, whatever the encoding around it.
        let tail = UUID().uuidString.lowercased()
        let secret = #"p@ss w"rd\ 100%+\#(tail)"#
        try space.writeJob(
            tasks: #"""
                {"id": "q", "method": "POST", "path": "/echo", "query": {"key": "\#(key)", "s": "${env:COURIER_TEST_SECRET}"},
                 "headers": {"X-Note": "note ${env:COURIER_TEST_SECRET}"}, "json": {"s": "${env:COURIER_TEST_SECRET}", "n": 1}},
                {"id": "p", "path": "/echo/${env:COURIER_TEST_SECRET}", "query": {"key": "\#(key)"}, "expect": {"status": [404]}},
                {"id": "down", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/x?s=${env:COURIER_TEST_SECRET}"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let environment = ["COURIER_TEST_SECRET": secret]
        let plan = try await space.run(["--dry-run"], backend: backend, environment: environment)
        #expect(plan.status == 0, "\(plan.stderr)")
        let result = try await space.run(backend: backend, environment: environment)
        #expect(result.status == 1, "only the task to a closed port fails: \(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 2)
        let bodies = hits.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any]
        }
        #expect(bodies.first?["s"] as? String == secret, "the secret reached the server")
        #expect(hits.contains { $0.header("X-Note") == "note \(secret)" })
        let written =
            try space.everyWrittenByte()
            + Data((plan.stdout + plan.stderr + result.stdout + result.stderr).utf8)
        #expect(written.range(of: Data(tail.utf8)) == nil, "a form of the secret leaked")
        #expect(!written.isEmpty)
        let line = try #require(try space.attempts("q").first)
        // A header holding a secret is a secret header (never sent to another origin), so its
        // value is logged redacted whole.
        #expect((line["requestHeaders"] as? [String: String])?["X-Note"] == "<redacted>")
        #expect((line["url"] as? String)?.contains("s=<redacted>") == true, "\(line["url"] ?? "")")
    }
}
