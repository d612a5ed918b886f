import CourierTestSupport
import Foundation
import Testing

/// A secret in an ordinary header or in a body never reaches another origin on a redirect.
@Suite("secrets and redirects")
struct SecretRedirectTests {
    @Test(
        "an ${env:…} header is dropped and a secret body is not re-sent across origins",
        arguments: RunCommandTests.backends)
    func secretsStayWithTheirOrigin(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("secret-hop")
        let token = "hk-\(UUID().uuidString)"
        let password = "pw-\(UUID().uuidString)"
        let headerTarget = space.server.otherHostURL("/echo?key=\(key)-header").absoluteString
        let bodyTarget = space.server.otherHostURL("/echo?key=\(key)-body").absoluteString
        let sameOrigin = space.server.url("/echo?key=\(key)-same").absoluteString
        try space.writeJob(
            tasks: #"""
                {"id": "header", "path": "/redirect", "query": {"to": "\#(headerTarget)", "status": "302"},
                 "headers": {"PRIVATE-TOKEN": "${env:HK}", "X-Vault-Token": "v-${env:HK}", "X-Plain": "p"}},
                {"id": "body", "method": "POST", "path": "/redirect", "query": {"to": "\#(bodyTarget)", "status": "307"},
                 "json": {"user": "u", "password": "${env:PW}"}},
                {"id": "same", "method": "POST", "path": "/redirect", "query": {"to": "\#(sameOrigin)", "status": "308"},
                 "json": {"user": "u", "password": "${env:PW}"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let result = try await space.run(
            backend: backend, environment: ["HK": token, "PW": password])
        #expect(result.status == 1, "the body task fails: \(result.stdout) \(result.stderr)")

        let header = try #require(
            try await ServerHits.of("\(key)-header", on: space.server).requests.first)
        #expect(header.header("PRIVATE-TOKEN") == nil)
        #expect(header.header("X-Vault-Token") == nil)
        #expect(header.header("X-Plain") == "p", "an ordinary header goes on")
        #expect(try await ServerHits.of("\(key)-body", on: space.server).count == 0)
        let failed = try #require(try space.attempts("body").last)
        #expect((failed["error"] as? [String: String])?["kind"] == "invalidRequest", "\(failed)")
        #expect(failed["status"] as? Int == 307, "the answer that came, not followed: \(failed)")
        let same = try #require(
            try await ServerHits.of("\(key)-same", on: space.server).requests.first)
        #expect(same.body.contains(password), "the same origin gets the body again")
        // Nothing courier wrote holds either secret.
        let written = String(decoding: try space.everyWrittenByte(), as: UTF8.self)
        #expect(!written.contains(token) && !written.contains(password))
    }

    /// Trial BB: a secret in a task's path came back in the server's redirect target in a form
    /// of the server's own (Datasette's tilde-encoding), which no search for the secret's
    /// known forms finds: the log's `finalURL`, the HAR export and the recording kept it.
    /// When the request's URL holds a secret, only the target's origin is written.
    @Test("a redirect target after a URL holding a secret is written as its origin alone")
    func redirectTargetOfASecretURL() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let token = "tk\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        let mirrored = String(token.reversed())
        try space.writeJob(
            tasks: #"""
                {"id": "secret", "path": "/mirror/${env:TK}", "save": "secret.json"},
                {"id": "plain", "path": "/mirror/plain-segment", "save": "plain.json"}
                """#)
        let recording = space.folder.appendingPathComponent("recording")
        let result = try await space.run(
            ["--record", recording.path], backend: "curl", environment: ["TK": token])
        #expect(result.status == 0, "\(result.stderr)")
        let secret = try #require(try space.attempts("secret").last)
        let origin = space.server.url("/").absoluteString.dropLast()
        #expect(secret["finalURL"] as? String == "\(origin)/<redacted>", "\(secret)")
        #expect(secret["redirects"] as? Int == 1)
        // A URL without a secret keeps its target whole.
        let plain = try #require(try space.attempts("plain").last)
        #expect((plain["finalURL"] as? String)?.hasSuffix("/echo?m=tnemges-nialp") == true)
        let har = try await CourierBinary.run(
            ["export", "--har", space.logs.path], directory: space.folder)
        // The log, the recording's answers and the HAR export (the saved body is the
        // server's answer, which echoes where it was asked: user data, kept as it came).
        let log = try space.logLines().map { "\($0)" }.joined()
        let answers = try String(
            contentsOf: recording.appendingPathComponent("recording.jsonl"), encoding: .utf8)
        for text in [log, answers, har.stdout] {
            #expect(!text.contains(token) && !text.contains(mirrored))
        }
        #expect(har.stdout.contains("<redacted>"), "\(har.stdout.prefix(300))")
    }
}

/// Environment values are data, never template text.
@Suite("environment values")
struct EnvironmentValueTests {
    @Test(
        "an ${env:…} value holding {var} is sent and redacted as it is",
        arguments: RunCommandTests.backends)
    func bracesInEnvironmentValues(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("envbrace")
        let secret = "s3cr{n}t-{id}-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "t{n}", "method": "POST", "path": "/echo", "query": {"key": "\#(key)", "q": "${env:SECRET}"},
                 "headers": {"X-Token": "${env:SECRET}"}, "json": {"pw": "${env:SECRET}", "n": "{n}"},
                 "auth": {"bearer": "${env:SECRET}"}, "foreach": {"n": [1]}}
                """#)
        let result = try await space.run(backend: backend, environment: ["SECRET": secret])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let hit = try #require(try await ServerHits.of(key, on: space.server).requests.first)
        #expect(hit.header("X-Token") == secret, "sent as it is, not rendered")
        #expect(hit.header("Authorization") == "Bearer \(secret)")
        #expect(hit.body.contains(#""pw":"\#(secret)""#), "\(hit.body)")
        #expect(hit.body.contains(#""n":"1""#), "the job's own template still renders")
        #expect(hit.path.contains("q=" + URLEncoding.encode(secret)), "\(hit.path)")
        let written = String(decoding: try space.everyWrittenByte(), as: UTF8.self)
        #expect(!written.contains(secret), "redacted everywhere")
        #expect(!written.contains("s3cr1t"), "not even its rendered form")
    }
}
