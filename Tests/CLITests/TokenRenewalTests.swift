import CourierTestSupport
import Foundation
import Testing

/// A captured login token that the server stops accepting mid-run: the job runner sends the
/// login task again (once for all the tasks rejected with the same token), resends each
/// rejected request with the new token, and logs both, against the fixture server's
/// `/sync/...&expire_after=N` API.
@Suite("renewing a captured token on 401")
struct TokenRenewalTests {
    /// A login, then `count` tasks that use its token, 16 at a time.
    static func job(key: String, count: Int, serverArgs: String) -> String {
        #"""
        {"id": "login", "method": "POST", "path": "/sync/login",
         "query": {"key": "\#(key)"\#(serverArgs)}, "json": {"password": "hunter22"},
         "capture": {"token": {"json": "/access_token"}}},
        {"id": "user-{n}", "path": "/sync/users/{n}", "query": {"key": "\#(key)"\#(serverArgs)},
         "foreach": {"n": {"range": [1, \#(count)]}}, "auth": {"bearer": "{token}"},
         "retry": {"maxAttempts": 1}}
        """#
    }

    @Test(
        "the first token expires after 10 requests: one renewal, every task ok, the rejected attempts logged as retries",
        arguments: ["curl", "urlsession"])
    func renewsOnce(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("renew-\(backend)")
        try space.writeJob(
            tasks: Self.job(key: key, count: 60, serverArgs: #", "expire_after": "10""#),
            extra: #""concurrency": 16,"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("61 tasks, 61 ok, 0 failed"), "\(result.stdout)")

        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.filter { $0.path.hasPrefix("/sync/login") }.count == 2, "one renewal")
        let lines = try space.logLines()
        LogContract.check(lines)
        let logins = lines.filter { $0["task"] as? String == "login" }
        #expect(logins.count == 2)
        #expect(logins.last?["renewal"] as? Bool == true)
        #expect(logins.allSatisfy { $0["outcome"] as? String == "ok" })

        // Every rejected attempt is a retry line naming the renewed capture, and its task's
        // next line is attempt 2 and ok.
        let rejected = lines.filter { $0["renewedToken"] != nil }
        #expect(!rejected.isEmpty, "some tasks were rejected once the first token expired")
        for line in rejected {
            #expect(line["renewedToken"] as? String == "token")
            #expect(line["status"] as? Int == 401)
            #expect(line["outcome"] as? String == "retry")
            #expect(line["attempt"] as? Int == 1)
            let task = line["task"] as? String
            let after = lines.filter { $0["task"] as? String == task }
            #expect(after.count == 2)
            #expect(after.last?["attempt"] as? Int == 2)
            #expect(after.last?["outcome"] as? String == "ok")
        }
        // 50 of the 60 users could only have been fetched with the second token.
        let second = hits.filter {
            $0.path.hasPrefix("/sync/users/")
                && $0.header("Authorization") == "Bearer tok-\(key)-g2-s3cr3t"
        }
        #expect(second.count >= 50)
        #expect(lines.last?["requests"] as? Int == 62 + rejected.count)

        // A second run of the same job logs in afresh (the server's third token, good from
        // the start), and leaves the first run's log as it was.
        let folder = space.logs.appendingPathComponent("e2e")
        let firstLog = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        let firstBytes = try Data(contentsOf: folder.appendingPathComponent(firstLog))
        let again = try await space.run(backend: backend)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("61 tasks, 61 ok, 0 failed"), "\(again.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2)
        #expect(try Data(contentsOf: folder.appendingPathComponent(firstLog)) == firstBytes)

        let everything =
            try space.everyWrittenByte()
            + Data((result.stdout + result.stderr + again.stdout + again.stderr).utf8)
        #expect(everything.range(of: Data("s3cr3t".utf8)) == nil, "no token in any byte")
    }

    @Test("a renewal that fails fails the rejected tasks with why, and logs in only once more")
    func failedRenewal() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("renew-fails")
        try space.writeJob(
            tasks: Self.job(
                key: key, count: 40, serverArgs: #", "expire_after": "5", "logins": "1""#),
            extra: #""concurrency": 8,"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("renew \"token\""), "\(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.filter { $0.path.hasPrefix("/sync/login") }.count == 2)
        let lines = try space.logLines()
        LogContract.check(lines)
        let renewal = lines.filter { $0["renewal"] as? Bool == true }
        #expect(renewal.count == 1)
        #expect(renewal.first?["outcome"] as? String == "failed")
        let failed = lines.filter {
            ($0["task"] as? String)?.hasPrefix("user-") == true
                && $0["outcome"] as? String == "failed"
        }
        #expect(failed.count == 35, "every task after the first token's five requests")
        #expect(failed.allSatisfy { $0["status"] as? Int == 401 })
        #expect(
            failed.allSatisfy {
                (($0["error"] as? [String: Any])?["message"] as? String)?.contains(
                    "cannot get an access token") == true
            })
    }

    @Test(
        "a server that rejects every token: each request is resent at most once, logins are bounded"
    )
    func neverLoops() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("renew-never")
        try space.writeJob(
            tasks: Self.job(
                key: key, count: 30, serverArgs: #", "expire_after": "1000", "reject_all": "1""#),
            extra: #""concurrency": 4,"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("31 tasks, 1 ok, 30 failed"), "\(result.stdout)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        let logins = hits.filter { $0.path.hasPrefix("/sync/login") }.count
        #expect(logins >= 2 && logins <= 11, "at most 10 renewals: \(logins)")
        let users = hits.filter { $0.path.hasPrefix("/sync/users/") }
        #expect(users.count <= 60, "each of the 30 resent at most once: \(users.count)")
        for line in try space.logLines() where (line["task"] as? String)?.hasPrefix("user-") == true
        {
            #expect((line["attempt"] as? Int ?? 0) <= 2)
        }
    }
}
