import CourierTestSupport
import Foundation
import Testing

/// `courier replay --dry-run --format curl` writes every secret as an environment reference:
/// Basic auth as `-u` (a one-letter password too), a bearer token, a query value that needs
/// percent-encoding, a path segment that keeps `/`, `+` and `&` as they are, and a secret in a
/// JSON body; and the commands, run by bash, send the real secrets, byte for byte.
@Suite("replay's curl commands and secrets")
struct CurlFormatSecretTests {
    @Test("no secret in any form in the curl commands, which reach the server with them all")
    func curlCommandsHoldReferencesOnly() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("curlsecrets")
        let toggle = FixtureServer.uniqueKey("toggle")
        let unique = UUID().uuidString.prefix(8)
        // Each secret needs some escaping somewhere: in a shell word, a URL or JSON.
        let environment = [
            "CURL_USER": "alice-\(unique)",
            "CURL_PASSWORD": "pw:\(unique) $x\"`",
            "CURL_TOKEN": "tok-\(unique)",
            "CURL_QUERY": "a b&c/d+é=\(unique)",
            "CURL_BODY": #"bo"dy\ é \#(unique)"#,
            // In a path: `/`, `+`, `&`, `=`, `$(` stay; `"`, the space and a stray `%` are
            // escaped, `%41` is kept as the escape it is (PercentEncoding.path), and `?` and
            // `#` are data, not a query or a fragment.
            "CURL_PATH": #"Tok"en/+&= $(id)%x%41?q=1#f-\#(unique)"#,
            // Shorter than any secret searched for in free text: only where the request says
            // it is secret (a Basic password) is it a reference, and no other word changes.
            "CURL_SHORT": "r",
        ]
        let target = #""path": "/toggle", "query": {"name": "\#(toggle)", "key": "\#(key)-%@"}"#
        func task(_ id: String, _ rest: String) -> String {
            #"{"id": "\#(id)", \#(target.replacingOccurrences(of: "%@", with: id)), \#(rest)}"#
        }
        try space.writeJob(
            tasks: [
                task(
                    "basic",
                    #""auth": {"basic": {"user": "${env:CURL_USER}", "password": "${env:CURL_PASSWORD}"}}"#
                ),
                task("bearer", #""auth": {"bearer": "${env:CURL_TOKEN}"}"#),
                #"""
                {"id": "query", "path": "/toggle",
                 "query": {"name": "\#(toggle)", "key": "\#(key)-query", "api_key": "${env:CURL_QUERY}"}}
                """#,
                task(
                    "body", #""method": "POST", "json": {"password": "${env:CURL_BODY}", "n": 1}"#),
                #"{"id": "path", "path": "/p/${env:CURL_PATH}", "query": {"key": "\#(key)-path"}}"#,
                // In a `url`'s query, the value is one query value (`&`, `=`, `+`, `#` and the
                // space encoded, `%41` kept).
                #"{"id": "url", "url": "\#(space.server.baseURL.absoluteString)/p/x?key=\#(key)-url&s=${env:CURL_PATH}&n=1"}"#,
                task(
                    "short", #""auth": {"basic": {"user": "u", "password": "${env:CURL_SHORT}"}}"#),
                task("text", #""method": "PUT", "body": "plain text, no type""#),
            ].joined(separator: ",\n"),
            extra: #""retry": {"maxAttempts": 1},"#)
        let run = try await space.run(backend: "curl", environment: environment)
        #expect(run.status == 1, "the toggle is off: every task fails. \(run.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)

        let printed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--dry-run", "--format", "curl"],
            environment: environment, directory: space.folder)
        #expect(printed.status == 0, "\(printed.stderr)")
        let output = printed.stdout + printed.stderr
        let basic = "\(environment["CURL_USER"]!):\(environment["CURL_PASSWORD"]!)"
        let secrets =
            Array(environment.values) + [
                Data(basic.utf8).base64EncodedString()
            ]
        for secret in secrets where secret.utf8.count >= 4 {
            for form in SecretsEverywhereTests.forms(of: secret) where output.contains(form) {
                Issue.record("\"\(form)\" (a form of a secret) is in the curl commands")
            }
        }
        #expect(!output.contains("<redacted>"), "nothing redacted: all references\n\(output)")
        #expect(!output.contains("Authorization: Basic"), "\(output)")
        #expect(output.contains(#"-u "${CURL_USER}:${CURL_PASSWORD}""#), "\(output)")
        #expect(output.contains(#"Authorization: Bearer ${CURL_TOKEN}"#), "\(output)")
        // Too short to be named after the variable that holds it (another might hold "r" too,
        // and naming it would tell the value): a variable of courier's, to export.
        let shortName = try #require(
            output.firstRange(of: #/-u "u:\$\{(COURIER_SECRET_[0-9]+)\}"/#).map {
                String(output[$0].dropFirst(8).dropLast(2))
            }, "\(output)")
        #expect(output.contains(#"$(courier_pathencode "$CURL_PATH")"#), "\(output)")
        #expect(output.contains(#"&s=$(courier_querydata "$CURL_PATH")&n=1"#), "\(output)")
        for name in environment.keys where name != "CURL_SHORT" {
            #expect(output.contains("#   \(name):"), "the notes name \(name)")
        }
        #expect(output.contains("#   \(shortName): "), "the notes name \(shortName)")

        // Run as printed, the whole of stdout (the count goes to stderr), variables exported.
        let script = printed.stdout
        #expect(!script.contains("courier:"), "only the script on stdout: \(script)")
        let ran = try await CourierBinary.run(
            ["-euc", script], executable: URL(fileURLWithPath: "/bin/bash"),
            environment: environment.merging([shortName: "r"]) { $1 }, directory: space.folder)
        #expect(ran.status == 0, "\(ran.stderr)\n\(script)")
        func replayed(_ id: String) async throws -> ServerHits.Entry {
            let hits = try await ServerHits.of("\(key)-\(id)", on: space.server).requests
            #expect(hits.count == 2, "\(id): the run's attempt and the command's")
            return try #require(hits.last)
        }
        #expect(
            try await replayed("basic").header("Authorization")
                == "Basic " + Data(basic.utf8).base64EncodedString())
        #expect(
            try await replayed("bearer").header("Authorization")
                == "Bearer \(environment["CURL_TOKEN"]!)")
        let query = try await replayed("query")
        let items = URLComponents(string: "http://host" + query.path)?.queryItems ?? []
        #expect(
            items.first { $0.name == "api_key" }?.value == environment["CURL_QUERY"],
            "\(query.path)")
        let body = try await replayed("body")
        let json = try JSONSerialization.jsonObject(with: Data(body.body.utf8)) as? [String: Any]
        #expect(json?["password"] as? String == environment["CURL_BODY"], "\(body.body)")
        #expect(json?["n"] as? Int == 1)
        // The path as the run sent it, byte for byte (a `+` or a `/` encoded differently is
        // another path to a server).
        let paths = try await ServerHits.of("\(key)-path", on: space.server).requests
        #expect(paths.count == 2 && paths[0].path == paths[1].path, "\(paths.map(\.path))")
        #expect(
            paths.first?.path.hasPrefix("/p/Tok%22en/+&=%20$(id)%25x%41%3Fq=1%23f-") == true,
            "the secret's ? and # went in the path, encoded: \(paths.map(\.path))")
        let urls = try await ServerHits.of("\(key)-url", on: space.server).requests
        #expect(urls.count == 2 && urls[0].path == urls[1].path, "\(urls.map(\.path))")
        #expect(
            urls.first?.path.hasSuffix(
                "&s=Tok%22en/%2B%26%3D%20$(id)%25x%41?q%3D1%23f-\(unique)&n=1")
                == true, "\(urls.map(\.path))")
        // A body the job gave no Content-Type goes without one from the script too.
        let text = try await ServerHits.of("\(key)-text", on: space.server).requests
        #expect(text.count == 2 && text[0].body == text[1].body, "\(text.map(\.body))")
        #expect(text.allSatisfy { $0.header("Content-Type") == nil }, "\(text.map(\.headers))")
        let short = try await ServerHits.of("\(key)-short", on: space.server).requests
        #expect(short.count == 2, "short: the run's attempt and the command's")
        if short.count == 2 {
            for name in ["Authorization", "User-Agent", "Accept"] {
                #expect(short[0].header(name) == short[1].header(name), "\(name)")
            }
        }
        // A bash script that stops at a variable not set (trial CCC: `sh` failed on it, and
        // an unset token went as an empty credential).
        #expect(script.hasPrefix("#!/usr/bin/env bash\nset -u\n"), "\(script)")
        let unset = try await CourierBinary.run(
            ["-c", script], executable: URL(fileURLWithPath: "/bin/bash"), directory: space.folder)
        #expect(
            unset.status != 0 && unset.stderr.contains("first (see above)"),
            "\(unset.status) \(unset.stderr)")
        // Set but empty, a variable would go as an empty credential: the script stops there
        // too, before any request (trial DDD: `Bearer `).
        var empty = environment.merging([shortName: "r"]) { $1 }
        empty["CURL_TOKEN"] = ""
        let before = try await ServerHits.of("\(key)-bearer", on: space.server).requests.count
        let emptied = try await CourierBinary.run(
            ["-c", script], executable: URL(fileURLWithPath: "/bin/bash"), environment: empty,
            directory: space.folder)
        #expect(
            emptied.status != 0 && emptied.stderr.contains("export CURL_TOKEN first"),
            "\(emptied.status) \(emptied.stderr)")
        #expect(try await ServerHits.of("\(key)-bearer", on: space.server).requests.count == before)
    }

    /// A trial's script read `-u "${COURIER_SECRET_2}:${B_SECRET}"` for a task's Basic auth
    /// whose user was written plainly: the task made its user a secret (the job's auth never
    /// did), which no variable of the user's held.
    @Test("a task's plain Basic user stays in the script as written; its password is a variable")
    func plainBasicUser() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let user = "alice-\(UUID().uuidString.prefix(8))"
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/status/500",
                 "auth": {"basic": {"user": "\#(user)", "password": "${env:B_SECRET}"}}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let environment = ["B_SECRET": "pa55-word-xyz"]
        _ = try await space.run(backend: "curl", environment: environment)
        let log = try #require(try ReplayTests.logFiles(space).first)
        let printed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--dry-run", "--format", "curl"],
            environment: environment, directory: space.folder)
        #expect(printed.stdout.contains(#"-u "\#(user):${B_SECRET}""#), "\(printed.stdout)")
        #expect(!printed.stdout.contains("COURIER_SECRET"), "\(printed.stdout)")
    }
}
