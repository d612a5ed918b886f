import Courier
import CourierTestSupport
import Foundation
import Testing

/// The hardening issue's secrets test: one run with secrets from every source (the
/// environment, job auth, a captured login token, URL userinfo, an API key in a header and a
/// query), on success and failure paths, then every command that reads its log. Every byte
/// Courier wrote (logs, outputs, the conditional state, reports in every format, replay plans
/// and curl commands, dry-run plans, stdout, stderr) is searched for every secret in every
/// encoding.
@Suite("secrets in every byte")
struct SecretsEverywhereTests {
    /// The forms a secret could leak in.
    static func forms(of secret: String) -> [String] {
        var forms = [
            secret, Data(secret.utf8).base64EncodedString(),
            secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret,
            // As a job's URL writes it in a path and in a query text: a `%41` the secret holds
            // stays, the rest is escaped.
            PercentEncoding.path(secret), PercentEncoding.queryText(secret),
            // As a `url` sends it in its query: data, `&`, `=`, `+`, `#` and spaces encoded,
            // then the whole URL made valid.
            PercentEncoding.urlText(
                secret.replacingOccurrences(of: "&", with: "%26")
                    .replacingOccurrences(of: "=", with: "%3D")
                    .replacingOccurrences(of: "+", with: "%2B")
                    .replacingOccurrences(of: "#", with: "%23")
                    .replacingOccurrences(of: " ", with: "%20")),
        ]
        if let json = try? JSONEncoder().encode(secret),
            let text = String(data: json, encoding: .utf8)
        {
            forms.append(String(text.dropFirst().dropLast()))
        }
        return forms
    }

    @Test(
        "no secret in any byte, in any encoding, on either backend",
        arguments: ["curl", "urlsession"])
    func everywhere(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("everywhere")
        let apiKey = "key-\(UUID().uuidString)"
        let userPassword = "pw-\(UUID().uuidString)"
        let origin = space.server.baseURL.absoluteString.replacingOccurrences(
            of: "http://", with: "")
        try space.writeJob(
            tasks: CaptureTests.syncJob(key: key, total: 4, perPage: 2) + #"""
                ,
                {"id": "userinfo", "url": "http://alice:\#(userPassword)@\#(origin)/echo?key=\#(key)"},
                {"id": "apikey", "path": "/status/200", "query": {"key": "\#(key)", "api_key": "${env:API_KEY}"},
                 "headers": {"X-Api-Key": "${env:API_KEY}"}, "save": "apikey.json"},
                {"id": "denied", "path": "/sync/users/1", "query": {"key": "\#(key)"},
                 "auth": {"bearer": "${env:API_KEY}"}},
                {"id": "broken", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/?api_key=${env:API_KEY}",
                 "headers": {"X-Api-Key": "${env:API_KEY}"}},
                {"id": "inpath", "path": "/echo/${env:PATH_SECRET}", "query": {"key": "\#(key)"}},
                {"id": "inpathquery", "path": "/echo?key=\#(key)&s=${env:PATH_SECRET}&n=1"},
                {"id": "inurl", "url": "\#(space.server.baseURL.absoluteString)/echo/${env:PATH_SECRET}?key=\#(key)&s=${env:PATH_SECRET}&n=1"},
                {"id": "injson", "method": "POST", "path": "/status/500", "query": {"key": "\#(key)"},
                 "json": {"s": "${env:BODY_SECRET}"}},
                {"id": "inbody", "method": "POST", "path": "/status/500", "query": {"key": "\#(key)"},
                 "body": "raw=${env:BODY_SECRET}"}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
        // In a path a `%41` of the secret's own is kept and a stray `%` escaped: a mix that
        // no decoding of the logged URL gives back (the log once kept it whole). Its `?` and
        // `#` are encoded too: data, not the start of a query (which logs would show apart).
        let pathSecret = #"p%41th"/+& %z?q#f-\#(UUID().uuidString)"#
        // In a body a `"` or `\` is JSON-escaped while the secret's own `%20` stays: found
        // only by decoding one kind of escape (a trial found it whole in the log). The tasks
        // fail, since the log keeps the bodies of failed requests.
        let bodySecret = #"b"o\dy%20-\#(UUID().uuidString)"#
        let environment = CaptureTests.environment.merging([
            "API_KEY": apiKey, "PATH_SECRET": pathSecret, "BODY_SECRET": bodySecret,
        ]) { $1 }
        // Saved outputs are the server's bytes, kept exactly: so no task here saves a body
        // that echoes a secret.
        let run = try await space.run(backend: backend, environment: environment)
        #expect(run.status == 1, "denied and broken fail: \(run.stderr)")
        // The secrets did reach the server: the test would prove nothing otherwise.
        let hits = try await ServerHits.of(key, on: space.server).requests
        let token = "tok-\(key)-s3cr3t"
        #expect(hits.contains { $0.header("Authorization") == "Bearer \(token)" })
        #expect(hits.contains { $0.header("X-Api-Key") == apiKey })
        #expect(
            hits.contains {
                $0.header("Authorization")
                    == "Basic " + Data("alice:\(userPassword)".utf8).base64EncodedString()
            })

        // The recovery paths write logs and outputs of their own: a resume (the failed tasks
        // sent again), a replay rebuilt from the job, and each shard of a fresh run.
        let logDir = space.logs.path
        let places = try await Self.everyPlace(
            space, run: run, environment: environment,
            extra: { log in
                [
                    ["run", "job.json", "--resume", "--log-dir", logDir, "--backend", backend],
                    [
                        "replay", log, "--job", "job.json", "--log-dir", logDir, "--backend",
                        backend,
                    ],
                    [
                        "run", "job.json", "--shard", "1/2", "--log-dir", logDir, "--backend",
                        backend,
                    ],
                    [
                        "run", "job.json", "--shard", "2/2", "--log-dir", logDir, "--backend",
                        backend,
                    ],
                ]
            })
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("report.html").path))
        let secrets = [
            apiKey, userPassword, token, "hunter22", pathSecret, bodySecret,
            Data("alice:\(userPassword)".utf8).base64EncodedString(),
        ]
        Self.expectNoLeak(of: secrets, in: places, backend: backend)
    }

    /// Every place a secret could leak to once `run` is done, named so that a leak says where:
    /// what it printed and what every
    /// command that reads its log (reports, replay plans and curl scripts, a dry run, validate,
    /// and `extra`) prints, and every file in the workspace but `inputs`.
    static func everyPlace(
        _ space: JobWorkspace, run: CourierBinary.Result, environment: [String: String],
        extra: (_ log: String) -> [[String]] = { _ in [] },
        inputs: Set<String> = ["job.json"]
    ) async throws -> [(String, Data)] {
        let log = try #require(try ReplayTests.logFiles(space).first)
        let commands: [[String]] =
            [
                ["report", log],
                ["report", "--json", log],
                ["report", log, "--html", "report.html", "--junit", "junit.xml"],
                ["replay", log, "--dry-run"],
                ["replay", log, "--dry-run", "--format", "curl"],
                ["replay", log, "--job", "job.json", "--dry-run"],
                ["replay", log, "--job", "job.json", "--dry-run", "--format", "curl"],
                ["run", "job.json", "--dry-run"],
                ["validate", "job.json"],
                ["export", "--har", log],
                ["show", log, "*"],
            ] + extra(log)
        var places = [("run", Data((run.stdout + run.stderr).utf8))]
        for command in commands {
            let result = try await CourierBinary.run(
                command, environment: environment, directory: space.folder)
            #expect(result.status != -1, "\(command) finished")
            places.append(
                (command.joined(separator: " "), Data((result.stdout + result.stderr).utf8)))
        }
        let files = FileManager.default.enumerator(
            at: space.folder, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            if !inputs.contains(url.lastPathComponent),
                let data = FileManager.default.contents(atPath: url.path)
            {
                places.append((url.lastPathComponent, data))
            }
        }
        return places
    }

    /// Records an issue for every form of every secret found in a place.
    static func expectNoLeak(of secrets: [String], in places: [(String, Data)], backend: String) {
        for secret in secrets {
            for form in forms(of: secret) {
                for (place, data) in places where data.range(of: Data(form.utf8)) != nil {
                    Issue.record("\(backend): \"\(form)\" leaked in \(place)")
                }
            }
        }
    }

    @Test(
        "OAuth2: no access token, refresh token or client secret in any byte, on either backend",
        arguments: ["curl", "urlsession"])
    func oauth2(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("everywhere-oauth")
        let secretFile = space.folder.appendingPathComponent("refresh-token")
        try "rt-\(key)-1-s3cr3t".write(to: secretFile, atomically: true, encoding: .utf8)
        let echo = #""path": "/echo-auth", "query": {"key": "\#(key)"}"#
        // A refresh-token grant that rotates, a first token revoked after 2 uses (so that
        // tokens are renewed mid-run), a server that echoes the token in a header and a body,
        // an expectation whose message would quote it, and a task that fails.
        try space.writeJob(
            tasks: OAuth2JobTests.items(key: key, count: 6, query: #", "revoke_after": "2""#)
                + #"""
                ,
                {"id": "echo", \#(echo)},
                {"id": "echo-expect", \#(echo), "expect": {"json": {"/authorization": "none"}}},
                {"id": "denied", "path": "/oauth/api/denied", "query": {"key": "\#(key)", "toggle": "\#(key)-never"}}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "concurrency": 3, "#
                + OAuth2JobTests.auth(
                    key: key, server: space.server, tokenQuery: "&rotate=1",
                    grant:
                        #""grant": "refresh_token", "refreshToken": "${file:refresh-token}", "clientSecret": "${env:CLIENT_SECRET}""#
                ))
        let environment = OAuth2JobTests.environment
        let run = try await space.run(backend: backend, environment: environment)
        #expect(run.status == 1, "echo-expect and denied fail: \(run.stderr)")
        #expect(run.stdout.contains("9 tasks, 7 ok, 2 failed"), "\(run.stdout)")
        // The tokens did reach the server, and were echoed: the test would prove nothing else.
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(
            hits.contains { $0.path.hasPrefix("/echo-auth") && $0.header("Authorization") != nil })

        // A replay sends the failed tasks again, with a token of its own. The secret's own
        // file is an input, as the job file is.
        let places = try await Self.everyPlace(
            space, run: run, environment: environment,
            extra: { log in
                [
                    [
                        "replay", log, "--job", "job.json", "--log-dir", space.logs.path,
                        "--no-progress",
                    ]
                ]
            }, inputs: ["job.json", "refresh-token"])
        // Every token the endpoint issued and every refresh token it handed out, the first one
        // included. The replay asks too, with the file's refresh token, which the rotation
        // spent (rotated tokens are not written back): it is refused, and says so.
        let issued = try await OAuth2JobTests.tokenRequests(key, space).count
        #expect(issued >= 3, "the run's first token, its renewal and the replay's request")
        let replayed = places.first { $0.0.hasSuffix("--no-progress") }.map {
            String(decoding: $0.1, as: UTF8.self)
        }
        #expect(replayed?.contains("answered 400: invalid_grant") == true, "\(replayed ?? "")")
        let tokens =
            (1...issued).map { "at-\(key)-\($0)-s3cr3t" }
            + (1...issued + 1).map { "rt-\(key)-\($0)-s3cr3t" }
        let basic = Data("courier-test:cl-s3cr3t%3A%2F%2B%20%C3%A9".utf8).base64EncodedString()
        Self.expectNoLeak(
            of: tokens + [OAuth2JobTests.clientSecret, "cl-s3cr3t", basic], in: places,
            backend: backend)
    }
}
