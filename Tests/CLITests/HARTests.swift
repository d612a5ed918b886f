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
        #expect(missing.stderr.contains("cannot read"), "\(missing.stderr)")
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
