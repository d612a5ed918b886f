import CourierTestSupport
import Foundation
import Testing

/// `courier report --otlp`: the spans checked against the log they came from, line by line.
@Suite("courier report --otlp")
struct OTLPExportTests {
    static let token = "otlp-\(UUID().uuidString)-s3cr3t"

    /// A run with a bearer token from the environment: a GET with a query and a header, a POST
    /// with a JSON body, a task retried on 503 until it fails, and a 404. Returns its log.
    static func recordedRun(_ space: JobWorkspace, key: String) async throws -> String {
        try space.writeJob(
            tasks: #"""
                {"id": "get", "path": "/echo", "query": {"key": "\#(key)", "q": "a b/ü"}, "headers": {"X-Trace": "t1"}},
                {"id": "post", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"name": "é \"q\"", "n": [1, 2.5]}},
                {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)-flaky", "fail": "5"}},
                {"id": "missing", "path": "/status/404", "query": {"key": "\#(key)-404"}}
                """#,
            extra:
                #""auth": {"bearer": "${env:EXPORT_TOKEN}"}, "retry": {"maxAttempts": 2, "initialDelay": 0.01},"#
        )
        let run = try await space.run(backend: "curl", environment: ["EXPORT_TOKEN": token])
        #expect(run.status == 1, "\(run.stderr)")
        return try #require(try ReplayTests.logFiles(space).first)
    }

    /// Every span's attributes as a dictionary of plain values.
    static func attributes(_ span: [String: Any]) -> [String: String] {
        var values: [String: String] = [:]
        for attribute in span["attributes"] as? [[String: Any]] ?? [] {
            guard let key = attribute["key"] as? String,
                let value = (attribute["value"] as? [String: Any])?.first?.value
            else { continue }
            values[key] = "\(value)"
        }
        return values
    }

    @Test("one span per attempt, matching the log line by line, under one root span per run")
    func spansMatchTheLog() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let log = try await Self.recordedRun(space, key: "otlp-\(UUID().uuidString)")
        let output = space.folder.appendingPathComponent("traces.json")
        let result = try await CourierBinary.run(["report", "--otlp", output.path, log])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = try Data(contentsOf: output)
        #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.token))

        let root = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        let resource = try #require((root["resourceSpans"] as? [[String: Any]])?.first)
        let resourceAttributes = Self.attributes(
            try #require(resource["resource"] as? [String: Any]))
        #expect(resourceAttributes["service.name"] == "courier")
        #expect(resourceAttributes["courier.job"] == "e2e")
        let scope = try #require((resource["scopeSpans"] as? [[String: Any]])?.first)
        let spans = try #require(scope["spans"] as? [[String: Any]])

        let requests = try space.logLines().filter { $0["event"] as? String == "request" }
        #expect(requests.count == 5)
        #expect(spans.count == requests.count + 1)
        let runSpan = spans[0]
        let runID = try #require(requests.first?["run"] as? String)
        let traceID = try #require(runSpan["traceId"] as? String)
        #expect(traceID.count == 32 && traceID.allSatisfy(\.isHexDigit))
        #expect((runSpan["spanId"] as? String)?.count == 16)
        #expect(runSpan["parentSpanId"] == nil)
        #expect(Self.attributes(runSpan)["courier.run"] == runID)

        for (line, span) in zip(requests, spans.dropFirst()) {
            let attributes = Self.attributes(span)
            let task = line["task"] as? String ?? "?"
            #expect(span["traceId"] as? String == traceID)
            #expect(span["parentSpanId"] as? String == runSpan["spanId"] as? String)
            #expect(span["kind"] as? Int == 3, "CLIENT")
            #expect(attributes["courier.task"] == task)
            #expect(attributes["http.request.method"] == line["method"] as? String)
            #expect(attributes["url.full"] == line["url"] as? String)
            #expect(
                attributes["http.response.status_code"] == (line["status"] as? Int).map(String.init)
            )
            #expect(attributes["courier.outcome"] == line["outcome"] as? String)
            #expect(attributes["server.address"] == "127.0.0.1")
            #expect(attributes["server.port"] == String(space.server.baseURL.port ?? 0))
            #expect(attributes["url.scheme"] == "http")
            let attempt = line["attempt"] as? Int ?? 0
            #expect(
                attributes["http.request.resend_count"] == (attempt > 1 ? String(attempt - 1) : nil)
            )
            #expect(
                attributes["http.response.body.size"]
                    == (line["bytesReceived"] as? Int).map(String.init))
            #expect(
                attributes["http.request.body.size"] == (line["bytesSent"] as? Int).map(String.init)
            )
            let errorKind = (line["error"] as? [String: Any])?["kind"] as? String
            let status = line["status"] as? Int ?? 0
            let expectedType = errorKind ?? (status >= 400 ? String(status) : nil)
            #expect(attributes["error.type"] == expectedType, "\(task)")
            let failed = expectedType != nil
            #expect(((span["status"] as? [String: Any])?["code"] as? Int == 2) == failed, "\(task)")
            // Start and end in nanoseconds, as strings, the end after the start.
            let start = try #require(Int64(span["startTimeUnixNano"] as? String ?? ""))
            let end = try #require(Int64(span["endTimeUnixNano"] as? String ?? ""))
            #expect(end >= start)
            // The span lasts the log's totalMs, to the microsecond (trial W: whole ms).
            if let total = (line["timings"] as? [String: Any])?["totalMs"] as? Double,
                line["throttledMs"] == nil || line["blockedMs"] != nil
            {
                #expect(abs(Double(end - start) / 1e6 - total) < 0.002, "\(task): \(total)")
            }
        }
        // Each task's kind of span, by name: the retried 503s and the 404 are errors.
        let byTask = Dictionary(grouping: spans.dropFirst()) {
            Self.attributes($0)["courier.task"] ?? ""
        }
        #expect(byTask["flaky"]?.count == 2)
        #expect(
            byTask["flaky"]?.compactMap { Self.attributes($0)["error.type"] } == [
                "503", "unexpectedStatus",
            ])
        #expect(
            byTask["missing"].map { $0.map { Self.attributes($0)["error.type"] } } == [
                "unexpectedStatus"
            ])
        #expect(byTask["get"]?.first?["status"] == nil)

        // The same log gives the same bytes: the ids come from the run id.
        let again = space.folder.appendingPathComponent("again.json")
        _ = try await CourierBinary.run(["report", "--otlp", again.path, log])
        #expect(try Data(contentsOf: again) == bytes)
    }

    @Test("--otlp-endpoint POSTs the same traces as JSON; a base URL gets /v1/traces")
    func postsToAnEndpoint() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "otlp-post-\(UUID().uuidString)"
        let log = try await Self.recordedRun(space, key: key)
        let file = space.folder.appendingPathComponent("traces.json")
        let posted = try await CourierBinary.run(
            [
                "report", "--otlp", file.path, "--otlp-endpoint",
                space.server.url("/echo?key=\(key)-collector").absoluteString, log,
            ])
        #expect(posted.status == 0, "\(posted.stderr)")
        let hits = try await ServerHits.of("\(key)-collector", on: space.server)
        #expect(hits.count == 1)
        let request = try #require(hits.requests.first)
        #expect(request.method == "POST")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.body == (try String(contentsOf: file, encoding: .utf8)))
        #expect(!request.body.contains(Self.token))

        // A base URL: OTLP's path is added. The fixture has no such route: its 404 is exit 1,
        // after the report, with the endpoint's answer and without the URL's password.
        var base = URLComponents(url: space.server.baseURL, resolvingAgainstBaseURL: false)!
        base.user = "collector"
        base.password = "pw-\(UUID().uuidString)"
        base.path = "/"
        base.query = "key=\(key)-base"
        let refused = try await CourierBinary.run(
            ["report", "--otlp-endpoint", base.url!.absoluteString, log])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("e2e"), "the report is printed first")
        #expect(refused.stderr.contains("answered 404"), "\(refused.stderr)")
        #expect(!refused.stderr.contains(base.password!), "\(refused.stderr)")
        let baseHits = try await ServerHits.of("\(key)-base", on: space.server)
        #expect(baseHits.requests.map(\.path) == ["/v1/traces?key=\(key)-base"])

        let bad = try await CourierBinary.run(["report", "--otlp-endpoint", "ftp://h/", log])
        #expect(bad.status == 2)
    }

    @Test("a file that is not a log is a clear error and exit 2")
    func notALog() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bogus = folder.appendingPathComponent("notes.txt")
        try "hello\n{\"a\": 1}\n".write(to: bogus, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("t.json")
        let result = try await CourierBinary.run(["report", "--otlp", output.path, bogus.path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no log lines could be read"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
