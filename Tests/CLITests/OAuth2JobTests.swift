import CourierTestSupport
import Foundation
import Testing

/// `auth.oauth2` end to end: the built `courier` against the fixture server's token endpoint
/// (`/oauth/token`, on the second port under `localhost`: another origin than the API) and its
/// protected routes (`/oauth/api/...`, which take only live tokens of their key).
@Suite("OAuth2 in a job's auth")
struct OAuth2JobTests {
    /// The fixture's client secret: `:`, `/`, `+`, a space and `é`, which the Basic
    /// credential must form-encode (RFC 6749 §2.3.1) for the server to take it.
    static let clientSecret = "cl-s3cr3t:/+ é"
    static let environment = ["CLIENT_SECRET": clientSecret]

    /// The job's `auth` for the fixture's client; `tokenQuery` is appended to the token URL's
    /// query, `extra` to the `oauth2` object.
    static func auth(
        key: String, server: FixtureServer, tokenQuery: String = "",
        grant: String = #""grant": "client_credentials", "clientSecret": "${env:CLIENT_SECRET}""#
    ) -> String {
        let url = server.otherHostURL("/oauth/token?key=\(key)\(tokenQuery)").absoluteString
        return #"""
            "auth": {"oauth2": {"tokenURL": "\#(url)", "clientId": "courier-test", "scope": "read items",
                                \#(grant)}},
            """#
    }

    /// `count` tasks on the protected API; `query` is added to their query.
    static func items(key: String, count: Int, query: String = "") -> String {
        #"""
        {"id": "item-{n}", "path": "/oauth/api/items/{n}", "query": {"key": "\#(key)"\#(query)},
         "foreach": {"n": {"range": [1, \#(count)]}}}
        """#
    }

    static func tokenRequests(_ key: String, _ space: JobWorkspace) async throws
        -> [ServerHits.Entry]
    {
        try await ServerHits.of(key, on: space.server).requests.filter {
            $0.path.hasPrefix("/oauth/token")
        }
    }

    static func apiRequests(_ key: String, _ space: JobWorkspace) async throws
        -> [ServerHits.Entry]
    {
        try await ServerHits.of(key, on: space.server).requests.filter {
            $0.path.hasPrefix("/oauth/api/")
        }
    }

    /// The form fields of a recorded request's body.
    static func form(_ entry: ServerHits.Entry) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in entry.body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test(
        "client credentials: one token request for 20 tasks starting together, on another origin, each side getting only its own credentials",
        arguments: ["curl", "urlsession"])
    func clientCredentials(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-cc-\(backend)")
        // The token endpoint answers slowly: 8 tasks are waiting for it at once.
        try space.writeJob(
            tasks: Self.items(key: key, count: 20),
            extra: #""concurrency": 8, "#
                + Self.auth(key: key, server: space.server, tokenQuery: "&delay_ms=300"))
        let result = try await space.run(backend: backend, environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("20 tasks, 20 ok, 0 failed"), "\(result.stdout)")

        let tokens = try await Self.tokenRequests(key, space)
        #expect(tokens.count == 1, "single flight: one token request for 20 tasks")
        let token = try #require(tokens.first)
        #expect(token.method == "POST")
        #expect(token.header("Content-Type") == "application/x-www-form-urlencoded")
        let basic = Data("courier-test:cl-s3cr3t%3A%2F%2B%20%C3%A9".utf8).base64EncodedString()
        #expect(token.header("Authorization") == "Basic \(basic)")
        #expect(
            Self.form(token) == ["grant_type": "client_credentials", "scope": "read items"])

        let api = try await Self.apiRequests(key, space)
        #expect(api.count == 20)
        for request in api {
            #expect(request.header("Authorization") == "Bearer at-\(key)-1-s3cr3t")
            let seen = request.path + request.body + request.headers.map { $0.joined() }.joined()
            #expect(
                !seen.contains(basic) && !seen.contains("cl-s3cr3t"), "no client secret to the API")
        }

        let lines = try space.logLines()
        LogContract.check(lines)
        let tokenLines = lines.filter { $0["event"] as? String == "token" }
        #expect(tokenLines.count == 1)
        #expect(tokenLines.first?["outcome"] as? String == "ok")
        #expect(tokenLines.first?["grant"] as? String == "client_credentials")
        #expect(tokenLines.first?["status"] as? Int == 200)
        #expect(lines.last?["requests"] as? Int == 20, "token requests are no task's attempts")
    }

    @Test(
        "refresh token from a file: a rejected token is refreshed with the rotated refresh token, the file left as it was",
        arguments: ["curl", "urlsession"])
    func refreshTokenGrant(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-rt-\(backend)")
        let file = space.folder.appendingPathComponent("refresh-token")
        try "rt-\(key)-1-s3cr3t\n".write(to: file, atomically: true, encoding: .utf8)
        // The first token is refused after 3 uses; each refresh token works once.
        try space.writeJob(
            tasks: Self.items(key: key, count: 12, query: #", "revoke_after": "3""#),
            extra: #""concurrency": 4, "#
                + Self.auth(
                    key: key, server: space.server, tokenQuery: "&rotate=1",
                    grant:
                        #""grant": "refresh_token", "refreshToken": "${file:refresh-token}", "clientSecret": "${env:CLIENT_SECRET}", "clientAuth": "body""#
                ))
        let result = try await space.run(backend: backend, environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("12 tasks, 12 ok, 0 failed"), "\(result.stdout)")

        let tokens = try await Self.tokenRequests(key, space)
        #expect(tokens.count == 2, "the first token, and one refresh for every task it failed")
        #expect(
            tokens.map { Self.form($0)["refresh_token"] } == [
                "rt-\(key)-1-s3cr3t", "rt-\(key)-2-s3cr3t",
            ])
        for token in tokens {
            #expect(token.header("Authorization") == nil, "clientAuth body")
            #expect(Self.form(token)["client_secret"] == Self.clientSecret)
            #expect(Self.form(token)["grant_type"] == "refresh_token")
        }
        #expect(
            try String(contentsOf: file, encoding: .utf8) == "rt-\(key)-1-s3cr3t\n",
            "the rotated refresh token lives in memory only")
        let lines = try space.logLines()
        LogContract.check(lines)
        #expect(lines.filter { $0["renewedToken"] as? String == "oauth2" }.count >= 1)
    }

    @Test("a token that expires within the run is replaced: a second token request, every task ok")
    func expiringToken() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-exp")
        // Tokens live 1 s; the tasks take at least 6 × 0.4 s one after another.
        try space.writeJob(
            tasks: Self.items(key: key, count: 6, query: #", "delay_ms": "400""#),
            extra: #""concurrency": 1, "#
                + Self.auth(key: key, server: space.server, tokenQuery: "&expires_in=1"))
        let result = try await space.run(backend: "curl", environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("6 tasks, 6 ok, 0 failed"), "\(result.stdout)")
        let tokens = try await Self.tokenRequests(key, space)
        #expect(tokens.count >= 2, "the first token could not serve the whole run")
        #expect(tokens.count <= 7, "not a token per request and more")
        let lines = try space.logLines()
        LogContract.check(lines)
        #expect(lines.filter { $0["event"] as? String == "token" }.count == tokens.count)
        // Every request went out with a token the server had issued.
        let api = try await Self.apiRequests(key, space)
        let issued = Set((1...tokens.count).map { "Bearer at-\(key)-\($0)-s3cr3t" })
        #expect(api.allSatisfy { issued.contains($0.header("Authorization") ?? "") })
    }

    @Test(
        "a 401 forces one refresh for all the tasks rejected with that token, and one resend each")
    func rejectedToken() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-401")
        try space.writeJob(
            tasks: Self.items(key: key, count: 20, query: #", "revoke_after": "5""#),
            extra: #""concurrency": 4, "retry": {"maxAttempts": 1}, "#
                + Self.auth(key: key, server: space.server))
        let result = try await space.run(backend: "curl", environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("20 tasks, 20 ok, 0 failed"), "\(result.stdout)")
        #expect(try await Self.tokenRequests(key, space).count == 2)

        let lines = try space.logLines()
        LogContract.check(lines)
        let rejected = lines.filter { $0["renewedToken"] != nil }
        #expect(!rejected.isEmpty, "tasks were rejected once the first token was revoked")
        for line in rejected {
            #expect(line["renewedToken"] as? String == "oauth2")
            #expect(line["status"] as? Int == 401)
            #expect(line["outcome"] as? String == "retry")
            let after = lines.filter { $0["task"] as? String == line["task"] as? String }
            #expect(after.count == 2)
            #expect(after.last?["attempt"] as? Int == 2)
            #expect(after.last?["outcome"] as? String == "ok")
        }
        let api = try await Self.apiRequests(key, space)
        #expect(api.count == 20 + rejected.count, "each rejected request resent once")
        #expect(lines.last?["requests"] as? Int == 20 + rejected.count)
    }

    /// A token endpoint that gives no token, and what the run says.
    struct Failure: Sendable, CustomStringConvertible {
        let query: String
        let secret: String
        let message: String
        /// Whether asking again could help, and so each task may ask again.
        let transient: Bool
        var description: String { message }
    }

    static let failures = [
        Failure(
            query: "&fail=invalid_client", secret: clientSecret,
            message: "answered 400: invalid_client (Client authentication failed)",
            transient: false),
        Failure(
            query: "", secret: "wrong secret",
            message: "answered 401: invalid_client (Client authentication failed)",
            transient: false),
        Failure(
            query: "&fail=500", secret: clientSecret,
            message: "answered 500 with no OAuth error (text/plain, 14 bytes)", transient: true),
        Failure(
            query: "&fail=nonjson", secret: clientSecret,
            message: "answered 200 with a body that is not a JSON object (text/html",
            transient: false),
        Failure(
            query: "&fail=noaccess", secret: clientSecret,
            message: "answered 200 without an access_token", transient: false),
        Failure(
            query: "&fail=redirect", secret: clientSecret,
            message: "answered 307, a redirect; token requests carry the client's credentials",
            transient: false),
    ]

    @Test(
        "a token endpoint that gives no token fails the tasks with its URL and why, exit 1",
        arguments: failures)
    func tokenEndpointFails(failure: Failure) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-fail")
        try space.writeJob(
            tasks: Self.items(key: key, count: 5),
            extra: #""concurrency": 8, "retry": {"maxAttempts": 1}, "#
                + Self.auth(key: key, server: space.server, tokenQuery: failure.query))
        let result = try await space.run(
            backend: "curl", environment: ["CLIENT_SECRET": failure.secret])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("5 tasks, 0 ok, 5 failed"), "\(result.stdout)")
        let url = space.server.otherHostURL("/oauth/token?key=\(key)\(failure.query)")
        #expect(
            result.stderr.contains(
                "cannot get an access token: token endpoint \(url.absoluteString) \(failure.message)"
            ), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
        #expect(try await Self.apiRequests(key, space).isEmpty, "nothing sent without a token")
        let tokens = try await Self.tokenRequests(key, space).count
        if failure.transient {
            #expect((1...5).contains(tokens))
        } else {
            #expect(tokens == 1, "an answer that asking again cannot mend is kept")
        }

        let lines = try space.logLines()
        LogContract.check(lines)
        let failed = lines.filter { $0["event"] as? String == "task.failed" }
        #expect(failed.count == 5)
        for line in failed {
            let error = line["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "token")
            #expect((error?["message"] as? String)?.contains(failure.message) == true)
        }
        let tokenLines = lines.filter { $0["event"] as? String == "token" }
        #expect(tokenLines.count == tokens)
        #expect(tokenLines.allSatisfy { $0["outcome"] as? String == "failed" })
        #expect(!(result.stdout + result.stderr).contains(failure.secret))

        // `courier report` reads a log with token lines and task.failed lines.
        let log = try #require(try ReplayTests.logFiles(space).first)
        let report = try await CourierBinary.run(["report", log], directory: space.folder)
        #expect(report.status == 0 || report.status == 1, "\(report.stderr)")
        #expect(report.stdout.contains("item-1"), "\(report.stdout)")
    }

    @Test(
        "a replay with --job asks for a fresh token, as does its curl script; without --job it is refused"
    )
    func replayOfAFailedTask() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-replay")
        let toggle = FixtureServer.uniqueKey("oauth-replay-toggle")
        try space.writeJob(
            tasks: #"""
                {"id": "steady", "path": "/oauth/api/steady", "query": {"key": "\#(key)"}},
                {"id": "flaky", "path": "/oauth/api/flaky", "query": {"key": "\#(key)", "toggle": "\#(toggle)"}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "# + Self.auth(key: key, server: space.server))
        let run = try await space.run(backend: "curl", environment: Self.environment)
        #expect(run.status == 1, "flaky fails: \(run.stderr)")
        #expect(try await Self.tokenRequests(key, space).count == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)

        // Without the job, the redacted Authorization cannot be had.
        let alone = try await CourierBinary.run(
            ["replay", log, "--log-dir", space.logs.path, "--no-progress"],
            environment: Self.environment, directory: space.folder)
        #expect(alone.status == 2, "\(alone.stderr)")
        #expect(alone.stderr.contains("give --job"), "\(alone.stderr)")

        let printed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--dry-run", "--format", "curl"],
            environment: Self.environment, directory: space.folder)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.contains("COURIER_OAUTH2_TOKEN=$(curl "), "\(printed.stdout)")
        #expect(
            printed.stdout.contains(#"-H "Authorization: Bearer ${COURIER_OAUTH2_TOKEN}""#),
            "\(printed.stdout)")
        #expect(printed.stdout.contains(#"courier_urlencode "$CLIENT_SECRET""#))
        #expect(printed.stdout.contains("#   CLIENT_SECRET:"), "the notes name the secret")
        #expect(!printed.stdout.contains("s3cr3t"), "no secret, no token: \(printed.stdout)")

        try await ReplayTests.switchOn(toggle, space.server)
        let replay = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            environment: Self.environment, directory: space.folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains("1 task, 1 ok, 0 failed"), "\(replay.stdout)")
        #expect(try await Self.tokenRequests(key, space).count == 2, "the replay's own token")
        let replayLog = try #require(try ReplayTests.logFiles(space).last)
        let replayLines = try String(contentsOfFile: replayLog, encoding: .utf8)
        #expect(replayLines.contains(#""event":"token""#))
        #expect(replayLines.contains(#""replayOf":{"run":"#))

        // The printed commands run as they are: a token request of their own, then the task.
        let script = printed.stdout.split(separator: "\n").filter { !$0.hasPrefix("courier:") }
            .joined(separator: "\n")
        let ran = try await CourierBinary.run(
            ["-euc", script], executable: URL(fileURLWithPath: "/bin/bash"),
            environment: Self.environment, directory: space.folder)
        #expect(ran.status == 0, "\(ran.stderr)\n\(script)")
        #expect(ran.stdout.contains(#""token": 3"#), "the script's own token: \(ran.stdout)")
        #expect(try await Self.tokenRequests(key, space).count == 3)
    }

    @Test(
        "a token endpoint that failed, then --resume: a fresh token for the tasks not done, none when all are"
    )
    func resume() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-resume")
        let toggle = FixtureServer.uniqueKey("oauth-resume-toggle")
        // A task that needs no token succeeds in the first run; the others need one.
        try space.writeJob(
            tasks: Self.items(key: key, count: 4) + #"""
                ,
                {"id": "plain", "path": "/status/200", "auth": {"bearer": "${env:CLIENT_SECRET}"}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "#
                + Self.auth(key: key, server: space.server, tokenQuery: "&fail_until=\(toggle)"))
        let first = try await space.run(backend: "curl", environment: Self.environment)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(first.stdout.contains("5 tasks, 1 ok, 4 failed"), "\(first.stdout)")
        #expect(first.stderr.contains("answered 503"), "\(first.stderr)")

        try await ReplayTests.switchOn(toggle, space.server)
        let before = try await Self.tokenRequests(key, space).count
        let resumed = try await space.run(
            ["--resume"], backend: "curl", environment: Self.environment)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("(1 done by earlier runs)"), "\(resumed.stdout)")
        #expect(try await Self.tokenRequests(key, space).count == before + 1)
        #expect(try await Self.apiRequests(key, space).count == 4)

        let again = try await space.run(
            ["--resume"], backend: "curl", environment: Self.environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            try await Self.tokenRequests(key, space).count == before + 1,
            "nothing left to send: no token asked for")
    }

    @Test(
        "a task's own auth replaces the job's: its own oauth2 client, or a bearer token; a dry run asks for no token"
    )
    func taskAuth() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-task")
        let other = FixtureServer.uniqueKey("oauth-task-other")
        let otherURL = space.server.url("/oauth/token?key=\(other)").absoluteString
        try space.writeJob(
            tasks: Self.items(key: key, count: 3) + #"""
                ,
                {"id": "own-client", "path": "/oauth/api/own", "query": {"key": "\#(other)"},
                 "auth": {"oauth2": {"tokenURL": "\#(otherURL)", "grant": "client_credentials",
                                     "clientId": "courier-test", "clientSecret": "${env:CLIENT_SECRET}",
                                     "clientAuth": "body"}}},
                {"id": "own-bearer", "path": "/echo", "query": {"key": "\#(key)"},
                 "auth": {"bearer": "${env:API_TOKEN}"}}
                """#,
            extra: Self.auth(key: key, server: space.server))
        let environment = Self.environment.merging(["API_TOKEN": "api-token-1234"]) { $1 }
        let dry = try await space.run(["--dry-run"], backend: "curl", environment: environment)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try await Self.tokenRequests(key, space).isEmpty, "a dry run sends nothing")

        let result = try await space.run(backend: "curl", environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("5 tasks, 5 ok, 0 failed"), "\(result.stdout)")
        #expect(try await Self.tokenRequests(key, space).count == 1)
        let own = try await Self.tokenRequests(other, space)
        #expect(own.count == 1)
        #expect(Self.form(own.first!)["client_id"] == "courier-test")
        let hits = try await ServerHits.of(key, on: space.server).requests
        let echo = try #require(hits.first { $0.path.hasPrefix("/echo") })
        #expect(echo.header("Authorization") == "Bearer api-token-1234")
        #expect(
            try await Self.apiRequests(other, space).first?.header("Authorization")
                == "Bearer at-\(other)-1-s3cr3t")
    }

    @Test(
        "a login task that takes the job's OAuth2 token sends it again when it is sent to renew its capture"
    )
    func loginRenewal() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("oauth-login")
        let sync = FixtureServer.uniqueKey("oauth-login-sync")
        // The login's token stops being good after 3 requests: the login is sent again.
        try space.writeJob(
            tasks: TokenRenewalTests.job(
                key: sync, count: 8, serverArgs: #", "expire_after": "3""#),
            extra: #""concurrency": 2, "# + Self.auth(key: key, server: space.server))
        let result = try await space.run(backend: "curl", environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let logins = try await ServerHits.of(sync, on: space.server).requests.filter {
            $0.path.hasPrefix("/sync/login")
        }
        #expect(logins.count == 2)
        #expect(logins.allSatisfy { $0.header("Authorization") == "Bearer at-\(key)-1-s3cr3t" })
    }
}
