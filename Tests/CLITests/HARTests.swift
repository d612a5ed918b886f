import CourierTestSupport
import Foundation
import Testing

/// `courier export --har` and `courier import --har`: a run's log as HAR, checked against the
/// HAR 1.2 schema, and back into a job that sends the same requests.
@Suite("courier export/import --har")
struct HARTests {
    static let token = "har-\(UUID().uuidString)-s3cr3t"
    static let session = "sess-\(UUID().uuidString)-s3cr3t"

    /// Requests of every kind the import has to carry over: a query with a space, a slash and
    /// a non-ASCII letter, a custom header, a secret-looking header from the environment, a
    /// JSON body with a string that looks like a template, a text body with braces, a form.
    static func writeJob(_ space: JobWorkspace, key: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "get", "path": "/echo", "query": {"key": "\#(key)", "q": "a b/ü"},
                 "headers": {"X-Trace": "t1", "X-Session-Token": "${env:EXPORT_SESSION}"}},
                {"id": "post", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"name": "é \"q\" {{name}} {", "n": [1, 2.5, -0.125], "ok": true, "none": null}},
                {"id": "text", "method": "PUT", "path": "/echo", "query": {"key": "\#(key)"},
                 "headers": {"Content-Type": "text/plain"}, "body": "{\"a\": {\"b\": \"{{x}}\"}} {{{{y}}}} }"},
                {"id": "form", "method": "PATCH", "path": "/echo", "query": {"key": "\#(key)", "page": "2"},
                 "headers": {"Content-Type": "application/x-www-form-urlencoded"}, "body": "a=1&b=two+words"},
                {"id": "gone", "method": "DELETE", "path": "/echo", "query": {"key": "\#(key)"}}
                """#,
            extra: #""auth": {"bearer": "${env:EXPORT_TOKEN}"}, "retry": {"maxAttempts": 1},"#)
    }

    static var environment: [String: String] {
        ["EXPORT_TOKEN": token, "EXPORT_SESSION": session]
    }

    /// A request as the server saw it, for comparing two runs: everything but the connection.
    struct Seen: Hashable, Comparable {
        var method, path, body: String
        var headers: [String]

        init(_ entry: ServerHits.Entry) {
            method = entry.method
            path = entry.path
            body = entry.body
            headers = entry.headers.map { "\($0[0].lowercased()): \($0[1])" }.sorted()
        }

        static func < (lhs: Seen, rhs: Seen) -> Bool {
            (lhs.method, lhs.path, lhs.body) < (rhs.method, rhs.path, rhs.body)
        }
    }

    @Test("a run exported to HAR and imported back sends the same requests")
    func roundTrip() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "har-\(UUID().uuidString)"
        try Self.writeJob(space, key: key)
        let first = try await space.run(backend: "curl", environment: Self.environment)
        #expect(first.status == 0, "\(first.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)

        // Export, checked against the HAR 1.2 schema; no secret in any byte.
        let har = space.folder.appendingPathComponent("recorded.har")
        let export = try await CourierBinary.run(["export", "--har", log, "-o", har.path])
        #expect(export.status == 0, "\(export.stderr)")
        let harBytes = try Data(contentsOf: har)
        let harText = String(decoding: harBytes, as: UTF8.self)
        #expect(!harText.contains(Self.token) && !harText.contains(Self.session))
        #expect(harText.contains("<redacted>"))
        let check = try await CourierBinary.run(
            [
                PackagePaths.fixtures.appendingPathComponent("check_schema.py").path,
                PackagePaths.fixtures.appendingPathComponent("har.schema.json").path, har.path,
            ], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(check.stdout == "\(har.path): ok\n", "\(check.stdout) \(check.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: harBytes) as? [String: Any])
        let entries = try #require((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 5)
        // Standard output gives the same archive.
        let stdout = try await CourierBinary.run(["export", "--har", log])
        #expect(Data(stdout.stdout.utf8) == harBytes)

        // Import: the secrets become variables, listed on stderr.
        let job = space.folder.appendingPathComponent("imported.json")
        let imported = try await CourierBinary.run(
            ["import", "--har", har.path, "-o", job.path, "--name", "imported"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let jobText = try String(contentsOf: job, encoding: .utf8)
        #expect(!jobText.contains(Self.token) && !jobText.contains(Self.session))
        #expect(jobText.contains("${env:AUTHORIZATION}"), "\(jobText)")
        #expect(jobText.contains("${env:X_SESSION_TOKEN}"), "\(jobText)")
        #expect(imported.stderr.contains("AUTHORIZATION"), "\(imported.stderr)")
        #expect(imported.stderr.contains("X_SESSION_TOKEN"), "\(imported.stderr)")
        // A job file that is there is kept, as `init` keeps it (trial EEE: replaced).
        let again = try await CourierBinary.run(
            ["import", "--har", har.path, "-o", job.path, "--name", "other"])
        #expect(again.status == 2 && again.stderr.contains("it exists"), "\(again.stderr)")
        #expect(try String(contentsOf: job, encoding: .utf8) == jobText)
        // A name the job file refuses is refused here, not written (trial FFF: `..`).
        let dots = space.folder.appendingPathComponent("dots.json")
        let named = try await CourierBinary.run(
            ["import", "--har", har.path, "-o", dots.path, "--name", ".."])
        #expect(named.status == 2 && named.stderr.contains("not dots alone"), "\(named.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dots.path))
        // A link that leads nowhere is kept too, not replaced by a file (trial FFF).
        let dangling = space.folder.appendingPathComponent("dangling.json")
        try FileManager.default.createSymbolicLink(
            atPath: dangling.path, withDestinationPath: "nowhere.json")
        let linked = try await CourierBinary.run(
            ["import", "--har", har.path, "-o", dangling.path, "--name", "linked"])
        #expect(linked.status == 2 && linked.stderr.contains("it exists"), "\(linked.stderr)")
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: dangling.path)
                == "nowhere.json")
        let secrets = ["AUTHORIZATION": "Bearer \(Self.token)", "X_SESSION_TOKEN": Self.session]
        let validate = try await CourierBinary.run(
            ["validate", job.path], environment: secrets, directory: space.folder)
        #expect(validate.status == 0, "\(validate.stderr)")

        let second = try await CourierBinary.run(
            ["run", job.path, "--log-dir", space.logs.path, "--backend", "curl", "--no-progress"],
            environment: secrets, directory: space.folder)
        #expect(second.status == 0, "\(second.stderr)")

        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.count == 10)
        let original = hits.requests.prefix(5).map(Seen.init).sorted()
        let replayed = hits.requests.dropFirst(5).map(Seen.init).sorted()
        #expect(original == replayed)
        // The requests are what the job asked for, not merely alike.
        #expect(original.map(\.method).sorted() == ["DELETE", "GET", "PATCH", "POST", "PUT"])
        let text = try #require(original.first { $0.method == "PUT" })
        #expect(text.body == #"{"a": {"b": "{x}"}} {{y}} }"#)
        let post = try #require(original.first { $0.method == "POST" })
        #expect(post.body.contains(#""é \"q\" {name} {""#), "\(post.body)")
        let get = try #require(original.first { $0.method == "GET" })
        #expect(get.headers.contains("x-session-token: \(Self.session)"))
        #expect(get.headers.contains("authorization: Bearer \(Self.token)"))
    }

    /// What a request was, apart from where it went: its method, path, body and headers but
    /// `Host`.
    struct Sent: Hashable, Comparable {
        var method, path, body: String
        var headers: [String]

        init(_ entry: ServerHits.Entry) {
            method = entry.method
            path = entry.path
            body = entry.body
            headers = entry.headers.filter { $0[0].lowercased() != "host" }
                .map { "\($0[0].lowercased()): \($0[1])" }.sorted()
        }

        static func < (lhs: Sent, rhs: Sent) -> Bool {
            (lhs.method, lhs.path, lhs.body) < (rhs.method, rhs.path, rhs.body)
        }
    }

    @Test("import --base-url sends a recording to another server, numbers and bodies as recorded")
    func importToAnotherBaseURL() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let server = space.server
        let key = "har-base-\(UUID().uuidString)"
        let recordedOrigin = server.baseURL.absoluteString
        // A third origin: the second port under the first host name.
        let elsewhere = "http://127.0.0.1:\(server.otherPort)"
        try space.writeJob(
            tasks: #"""
                {"id": "get", "path": "/echo", "query": {"key": "\#(key)", "q": "a b/ü"},
                 "headers": {"X-Trace": "t1", "Referer": "\#(recordedOrigin)/start"}},
                {"id": "post", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"price": 1.50, "big": 123456789012345678901234567890, "tiny": 1E-7,
                          "zero": -0.0, "list": [10, 2.500], "link": "\#(recordedOrigin)/echo"}},
                {"id": "text", "method": "PUT", "path": "/echo", "query": {"key": "\#(key)"},
                 "headers": {"Content-Type": "text/plain"}, "body": "see \#(recordedOrigin)/x 007.10"},
                {"id": "kept", "url": "\#(elsewhere)/echo?key=\#(key)"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 0, "\(first.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)
        let har = space.folder.appendingPathComponent("recorded.har")
        let export = try await CourierBinary.run(["export", "--har", log, "-o", har.path])
        #expect(export.status == 0, "\(export.stderr)")

        // Imported onto the second origin.
        let newBase = "http://localhost:\(server.otherPort)"
        let job = space.folder.appendingPathComponent("moved.json")
        let imported = try await CourierBinary.run([
            "import", "--har", har.path, "-o", job.path, "--name", "moved", "--base-url", newBase,
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("2 origins"), "\(imported.stderr)")
        let jobText = try String(contentsOf: job, encoding: .utf8)
        let jobObject = try #require(
            try JSONSerialization.jsonObject(with: Data(jobText.utf8)) as? [String: Any])
        #expect(jobObject["baseURL"] as? String == newBase)
        let tasks = try #require(jobObject["tasks"] as? [[String: Any]])
        #expect(tasks.count == 4)
        for task in tasks {
            if task["id"] as? String == "kept" {
                #expect(task["url"] as? String == "\(elsewhere)/echo", "\(task)")
            } else {
                #expect(task["path"] as? String == "/echo", "\(task)")
                #expect(task["url"] == nil, "\(task)")
            }
        }
        // The numbers as written, and the recorded origin where a header or body names it.
        for written in [
            "1.50", "123456789012345678901234567890", "1E-7", "-0.0", "2.500",
            "\(recordedOrigin)/echo", "see \(recordedOrigin)/x 007.10", "\(recordedOrigin)/start",
        ] {
            #expect(jobText.contains(written), "\(written) in \(jobText)")
        }

        let second = try await CourierBinary.run(
            ["run", job.path, "--log-dir", space.logs.path, "--backend", "curl", "--no-progress"],
            directory: space.folder)
        #expect(second.status == 0, "\(second.stderr)")
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.count == 8)
        let recorded = Array(hits.requests.prefix(4))
        let replayed = Array(hits.requests.dropFirst(4))
        let hosts = { (entries: [ServerHits.Entry]) in
            entries.compactMap { $0.header("Host") }.sorted()
        }
        #expect(
            hosts(recorded)
                == (["127.0.0.1:\(server.otherPort)"]
                + Array(repeating: "127.0.0.1:\(server.port)", count: 3)).sorted())
        // Where the recording went to its base, the job goes to the new one; the rest stays.
        #expect(
            hosts(replayed).sorted()
                == (["127.0.0.1:\(server.otherPort)"]
                + Array(repeating: "localhost:\(server.otherPort)", count: 3)).sorted())
        // And sends the same bytes.
        #expect(recorded.map(Sent.init).sorted() == replayed.map(Sent.init).sorted())
        let post = try #require(replayed.first { $0.method == "POST" })
        let recordedPost = try #require(recorded.first { $0.method == "POST" })
        #expect(post.body == recordedPost.body)
        #expect(post.body.contains("1.50") && post.body.contains("2.500"), "\(post.body)")
    }

    /// Trial UUU: a `bodyFile` PUT was imported with no body, in silence (it would PUT
    /// nothing), and a query value holding JSON with a redacted secret was imported
    /// percent-encoded, so that the job encoded it again (`%257B`).
    @Test("import --har keeps a body sent from a file and a query value with a redacted part")
    func importBodyFileAndRedactedQuery() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "har-file-\(UUID().uuidString)"
        let upload = space.folder.appendingPathComponent("upload.bin")
        try Data([0, 1, 2, 255]).write(to: upload)
        try space.writeJob(
            tasks: #"""
                {"id": "put", "method": "PUT", "path": "/echo", "query": {"key": "\#(key)"},
                 "bodyFile": "upload.bin"},
                {"id": "q", "path": "/echo",
                 "query": {"key": "\#(key)", "v": "{\"access_token\":\"${env:EXPORT_TOKEN}\",\"n\":1}",
                           "sig": "pre-${env:EXPORT_TOKEN}-post"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl", environment: Self.environment)
        #expect(first.status == 0, "\(first.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)
        let har = space.folder.appendingPathComponent("recorded.har")
        #expect(try await CourierBinary.run(["export", "--har", log, "-o", har.path]).status == 0)
        let harText = try String(contentsOf: har, encoding: .utf8)
        #expect(!harText.contains(Self.token))
        #expect(harText.contains("4 bytes sent from the file"), "\(harText)")
        let job = space.folder.appendingPathComponent("imported.json")
        let imported = try await CourierBinary.run(
            ["import", "--har", har.path, "-o", job.path, "--name", "imported"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("sends that file"), "\(imported.stderr)")
        let jobText = try String(contentsOf: job, encoding: .utf8)
        #expect(jobText.contains(#""bodyFile""#), "\(jobText)")
        // The secret part of a value is a variable, the rest kept (trial WWW: a partly
        // redacted `sig` became the variable alone).
        #expect(!jobText.contains("%7B") && !jobText.contains("<redacted>"), "\(jobText)")
        #expect(jobText.contains(#""pre-${env:QUERY_SIG}-post""#), "\(jobText)")
        #expect(jobText.contains(#"\"access_token\":\"${env:QUERY_V}\""#), "\(jobText)")
        var environment = Self.environment
        environment["QUERY_SIG"] = Self.token
        environment["QUERY_V"] = Self.token
        let second = try await CourierBinary.run(
            ["run", job.path, "--log-dir", space.logs.path, "--backend", "curl", "--no-progress"],
            environment: environment, directory: space.folder)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.count == 4)
        let original = hits.requests.prefix(2).map(Seen.init).map { [$0.method, $0.path, $0.body] }
        let again = hits.requests.dropFirst(2).map(Seen.init).map { [$0.method, $0.path, $0.body] }
        #expect(original.sorted { $0[0] < $1[0] } == again.sorted { $0[0] < $1[0] })
    }

    @Test("import --base-url that is not an absolute http(s) URL is a clear error and exit 2")
    func importWithABadBaseURL() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("one.har")
        try
            #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://127.0.0.1:1/a"}}]}}"#
            .write(to: har, atomically: true, encoding: .utf8)
        let job = folder.appendingPathComponent("job.json")
        for (value, message) in [
            ("ftp://example.com", "absolute http or https URL"),
            ("/relative/path", "absolute http or https URL"),
            ("example.com:8080", "absolute http or https URL"),
            ("http://", "absolute http or https URL"),
            ("http://{host}", "absolute http or https URL"),
            ("http://user:pw@example.com", "no user or password"),
            ("http://example.com/v1?x=1", "no query"),
        ] {
            let result = try await CourierBinary.run([
                "import", "--har", har.path, "-o", job.path, "--base-url", value,
            ])
            #expect(result.status == 2, "\(value)")
            #expect(
                result.stderr.contains("--base-url") && result.stderr.contains(message),
                "\(value): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: job.path), "\(value)")
        }
        let missing = try await CourierBinary.run(["import", "--har", har.path, "--base-url"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--base-url needs a value"), "\(missing.stderr)")
        // A path is a prefix the recorded paths are joined to.
        let prefixed = try await CourierBinary.run([
            "import", "--har", har.path, "--base-url", "https://staging.example.com/api/v2",
        ])
        #expect(prefixed.status == 0, "\(prefixed.stderr)")
        #expect(prefixed.stdout.contains(#""baseURL": "https://staging.example.com/api/v2""#))
        #expect(prefixed.stdout.contains(#""path":"/a""#), "\(prefixed.stdout)")
    }

    /// Trial WWW: a recorded `Idempotency-Key` was imported as a secret, `${env:IDEMPOTENCY_KEY}`.
    @Test("a recorded idempotency key imports as idempotencyKey, no variable")
    func idempotencyKeyImported() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("keyed.har")
        let headers = #"[{"name": "Idempotency-Key", "value": "k-123"}]"#
        try #"""
        {"log": {"entries": [
          {"request": {"method": "POST", "url": "http://127.0.0.1:1/charges", "headers": \#(headers)}},
          {"request": {"method": "GET", "url": "http://127.0.0.1:1/charges", "headers": \#(headers)}}]}}
        """#.write(to: har, atomically: true, encoding: .utf8)
        let result = try await CourierBinary.run(["import", "--har", har.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""idempotencyKey":true"#), "\(result.stdout)")
        #expect(!result.stdout.contains("IDEMPOTENCY_KEY"), "\(result.stdout)")
        #expect(!result.stderr.contains("IDEMPOTENCY_KEY"), "\(result.stderr)")
    }

    @Test(
        "a redacted secret in a path, and one variable for several redacted credentials, are said")
    func redactedValuesAreSaid() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("redacted.har")
        func entry(_ path: String, _ authorization: String) -> String {
            #"{"request": {"method": "GET", "url": "http://127.0.0.1:1\#(path)", "headers": [{"name": "Authorization", "value": "\#(authorization)"}]}}"#
        }
        try
            #"{"log": {"entries": [\#(entry("/basic-auth/u/%3Credacted%3E", "<redacted>")), \#(entry("/b", "<redacted>"))]}}"#
            .write(to: har, atomically: true, encoding: .utf8)
        let result = try await CourierBinary.run(["import", "--har", har.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""path":"/basic-auth/u/<redacted>""#), "\(result.stdout)")
        #expect(result.stderr.contains("its path held a secret"), "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "${env:AUTHORIZATION} stands for the redacted value of 2 requests"),
            "\(result.stderr)")
        // The job as imported would send the word for the secret: validate (and run) refuse
        // it until a reference stands in its place.
        let job = folder.appendingPathComponent("imported.json")
        try result.stdout.write(to: job, atomically: true, encoding: .utf8)
        let validated = try await CourierBinary.run(
            ["validate", job.path], environment: ["AUTHORIZATION": "Basic dTpw"])
        #expect(validated.status == 2, "\(validated.stderr)")
        #expect(
            validated.stderr.contains("tasks[0].path: holds <redacted>"), "\(validated.stderr)")
    }

    /// Trial BB: an exported run's `traceparent` went into every imported task, so a run of
    /// the imported job claimed the recorded run's span for each request.
    @Test("import --har leaves out the recorded trace context")
    func importDropsTraceContext() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("traced.har")
        try #"""
        {"log": {"entries": [{"request": {"method": "GET", "url": "http://127.0.0.1:1/a", "headers": [
          {"name": "traceparent", "value": "00-90ec1c6b3b5a4e0f9d7f5a2b3c4d5e6f-1a2b3c4d5e6f7a8b-01"},
          {"name": "tracestate", "value": "vendor=1"}, {"name": "X-Kept", "value": "k"}]}}]}}
        """#.write(to: har, atomically: true, encoding: .utf8)
        let result = try await CourierBinary.run(["import", "--har", har.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.lowercased().contains("traceparent"), "\(result.stdout)")
        #expect(!result.stdout.lowercased().contains("tracestate"), "\(result.stdout)")
        #expect(result.stdout.contains("X-Kept"), "\(result.stdout)")
    }

    @Test("a HAR that is not JSON, or not a HAR, is a clear error and exit 2")
    func badHAR() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases = [
            ("notjson.har", "<html>not a har</html>", "not JSON"),
            ("empty.har", "", "not JSON"),
            ("object.har", #"{"entries": []}"#, "no log.entries"),
            (
                "nourl.har", #"{"log": {"entries": [{"request": {"method": "GET"}}]}}"#,
                "no http or https url"
            ),
            ("none.har", #"{"log": {"version": "1.2", "entries": []}}"#, "no entries"),
        ]
        for (name, text, message) in cases {
            let file = folder.appendingPathComponent(name)
            try text.write(to: file, atomically: true, encoding: .utf8)
            let job = folder.appendingPathComponent("\(name).json")
            let result = try await CourierBinary.run(["import", "--har", file.path, "-o", job.path])
            #expect(result.status == 2, "\(name)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: job.path))
        }
        let missing = try await CourierBinary.run([
            "import", "--har", folder.appendingPathComponent("nope.har").path,
        ])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nope.har: no such file"), "\(missing.stderr)")
    }

    @Test("export of a file that is not a log is a clear error and exit 2")
    func exportOfANonLog() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bogus = folder.appendingPathComponent("notes.jsonl")
        try "not a log\n[1, 2]\n".write(to: bogus, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("out.har")
        let result = try await CourierBinary.run(["export", "--har", bogus.path, "-o", output.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no request lines could be read"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let noFormat = try await CourierBinary.run(["export", bogus.path])
        #expect(noFormat.status == 2)
        #expect(noFormat.stderr.contains("--har"), "\(noFormat.stderr)")
    }
}
