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
