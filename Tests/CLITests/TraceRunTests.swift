import CourierTestSupport
import Foundation
import Testing

/// Trace context on the wire: each attempt's `traceparent` as the server got it, on both
/// transports, the run's trace sent to an OTLP endpoint from the environment when it ends, and
/// the same ids in `courier report --otlp` of its log: the server's spans join Courier's.
@Suite("trace context of a run")
struct TraceRunTests {
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let caller = "00f067aa0ba902b7"

    /// The spans of an OTLP/JSON export.
    static func spans(_ text: String) throws -> (service: String?, spans: [[String: Any]]) {
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var service: String?
        var spans: [[String: Any]] = []
        for resource in root["resourceSpans"] as? [[String: Any]] ?? [] {
            let attributes = OTLPExportTests.attributes(
                resource["resource"] as? [String: Any] ?? [:])
            service = attributes["service.name"]
            for scope in resource["scopeSpans"] as? [[String: Any]] ?? [] {
                spans += scope["spans"] as? [[String: Any]] ?? []
            }
        }
        return (service, spans)
    }

    @Test(
        "each attempt sends a span of the caller's trace; the exported spans are those spans",
        arguments: ["curl", "urlsession"])
    func joinsTheServersSpans(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "trace-\(UUID().uuidString)"
        let apiKey = "k\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)-flaky", "fail": "1"}},
                {"id": "plain", "path": "/echo", "query": {"key": "\#(key)"}},
                {"id": "dropped", "path": "/truncated", "query": {"key": "\#(key)-drop"}}
                """#,
            extra: #""trace": true, "retry": {"maxAttempts": 2, "initialDelay": 0.01},"#)
        let collector = space.server.url("/echo?key=\(key)-collector").absoluteString
        let run = try await space.run(
            backend: backend,
            environment: [
                "TRACEPARENT": "00-\(Self.trace)-\(Self.caller)-01",
                "TRACESTATE": "congo=t61rcWkgMzE",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector,
                "OTEL_SERVICE_NAME": "nightly-sync",
                "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=\(apiKey)%3D",
            ])
        #expect(run.status == 1, "\(run.stderr)")

        // What the server got: five attempts (a 503, its retry, the plain one, and two whose
        // answer was cut short), each with its own span of the caller's trace, and the caller's
        // tracestate.
        let flaky = try await ServerHits.of("\(key)-flaky", on: space.server)
        let plain = try await ServerHits.of(key, on: space.server)
        let dropped = try await ServerHits.of("\(key)-drop", on: space.server)
        #expect(flaky.count == 2 && plain.count == 1 && dropped.count == 2)
        var sent: [String] = []
        for request in flaky.requests + plain.requests + dropped.requests {
            let header = try #require(request.header("traceparent"), "\(request.path)")
            let parts = header.split(separator: "-").map(String.init)
            #expect(parts.count == 4 && parts[0] == "00" && parts[1] == Self.trace)
            #expect(parts.last == "01")
            sent.append(parts[2])
            #expect(request.header("tracestate") == "congo=t61rcWkgMzE")
        }
        #expect(Set(sent).count == 5 && !sent.contains(Self.caller))
        // An attempt with no whole answer logs the span it was sent (trial O: none was logged, and
        // the export made one up).
        let droppedSpans = try space.attempts("dropped").compactMap {
            ($0["requestHeaders"] as? [String: String])?["traceparent"]?.split(separator: "-")
                .dropFirst(2).first.map(String.init)
        }
        #expect(droppedSpans == Array(sent.suffix(2)), "\(droppedSpans) \(sent)")

        // What the collector got: one export, the run's span under the caller's, and an
        // attempt span for each span the server saw, under the run's.
        let posts = try await ServerHits.of("\(key)-collector", on: space.server)
        #expect(posts.count == 1)
        let post = try #require(posts.requests.first)
        #expect(post.method == "POST" && post.header("x-api-key") == apiKey + "=")
        let (service, spans) = try Self.spans(post.body)
        #expect(service == "nightly-sync")
        #expect(spans.allSatisfy { $0["traceId"] as? String == Self.trace })
        let root = try #require(spans.first { $0["kind"] as? Int == 1 })
        #expect(root["parentSpanId"] as? String == Self.caller)
        let attempts = spans.filter { $0["kind"] as? Int == 3 }
        #expect(Set(attempts.compactMap { $0["spanId"] as? String }) == Set(sent))
        #expect(attempts.allSatisfy { $0["parentSpanId"] as? String == root["spanId"] as? String })

        // The log keeps each header as sent; a report of it later gives the same spans.
        let log = try #require(try ReplayTests.logFiles(space).first)
        let file = space.folder.appendingPathComponent("later.json")
        // With the run's OpenTelemetry variables, the same service, past the same gateway.
        let report = try await CourierBinary.run(
            [
                "report", "--otlp", file.path, "--otlp-endpoint",
                space.server.url("/echo?key=\(key)-again").absoluteString, log,
            ],
            environment: [
                "OTEL_SERVICE_NAME": "nightly-sync",
                "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=\(apiKey)",
            ])
        #expect(report.status == 0, "\(report.stderr)")
        let (laterService, later) = try Self.spans(String(contentsOf: file, encoding: .utf8))
        #expect(laterService == "nightly-sync")
        let again = try await ServerHits.of("\(key)-again", on: space.server)
        #expect(again.requests.first?.header("x-api-key") == apiKey)
        #expect(
            Set(later.compactMap { $0["spanId"] as? String })
                == Set(spans.compactMap { $0["spanId"] as? String }))
        let written = try String(contentsOf: URL(fileURLWithPath: log), encoding: .utf8)
        for output in [written, run.stdout, run.stderr] {
            #expect(!output.contains(apiKey), "the exporter's header is a secret")
        }
    }

    @Test("without trace asked for: nothing added on the wire, the log still joins the caller")
    func callerOnly() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "trace-off-\(UUID().uuidString)"
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}}"#)
        let run = try await space.run(
            backend: "curl", environment: ["TRACEPARENT": "00-\(Self.trace)-\(Self.caller)-01"])
        #expect(run.status == 0, "\(run.stderr)")
        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.count == 1 && hits.requests.first?.header("traceparent") == nil)
        let start = try #require(
            try space.logLines().first { $0["event"] as? String == "run.start" })
        let trace = try #require(start["trace"] as? [String: Any])
        #expect(trace["traceId"] as? String == Self.trace)
        #expect(trace["parentSpanId"] as? String == Self.caller)
        #expect(trace["propagated"] as? Bool == false)
        let log = try #require(try ReplayTests.logFiles(space).first)
        let file = space.folder.appendingPathComponent("t.json")
        _ = try await CourierBinary.run(["report", "--otlp", file.path, log])
        let spans = try Self.spans(String(contentsOf: file, encoding: .utf8)).spans
        #expect(spans.count == 2 && spans.allSatisfy { $0["traceId"] as? String == Self.trace })

        // --trace alone: a trace of the run's own, its id in run.start and on the wire.
        try FileManager.default.removeItem(at: space.logs)
        let own = try await space.run(["--trace"], backend: "curl")
        #expect(own.status == 0, "\(own.stderr)")
        let ownStart = try #require(
            try space.logLines().first { $0["event"] as? String == "run.start" })
        let ownTrace = try #require((ownStart["trace"] as? [String: Any])?["traceId"] as? String)
        let again = try await ServerHits.of(key, on: space.server)
        #expect(again.requests.last?.header("traceparent")?.contains("-\(ownTrace)-") == true)
        #expect(ownTrace != Self.trace)
    }

    @Test("a collector that refuses: one warning, the exit code kept")
    func refusingCollector() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        let run = try await space.run(
            ["--trace"], backend: "curl",
            environment: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": space.server.url("/status/500").absoluteString
            ])
        #expect(run.status == 0)
        #expect(run.stderr.contains("the run's trace was not exported"), "\(run.stderr)")
    }

    @Test("a long run's trace goes in parts: every attempt's span once, the run's with the last")
    func exportInParts() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "trace-parts-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"{"id": "t{n}", "path": "/echo", "foreach": {"n": {"range": [1, 5]}}}"#,
            extra: #""trace": true,"#)
        let run = try await space.run(
            backend: "curl",
            environment: [
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
                    space.server.url("/echo?key=\(key)").absoluteString,
                "COURIER_OTLP_PART_SPANS": "2",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let posts = try await ServerHits.of(key, on: space.server).requests
        #expect(posts.count == 3, "parts of 2, 2 and 1 with the run's span")
        var ids: [String] = []
        var roots = 0
        for (index, post) in posts.enumerated() {
            let spans = try Self.spans(post.body).spans
            let runSpans = spans.filter { $0["kind"] as? Int == 1 }.count
            #expect(runSpans == (index == posts.count - 1 ? 1 : 0), "part \(index)")
            roots += runSpans
            ids += spans.filter { $0["kind"] as? Int == 3 }.compactMap { $0["spanId"] as? String }
        }
        #expect(roots == 1 && ids.count == 5 && Set(ids).count == 5, "\(ids)")
    }

    @Test("replay --job of a job that traces sends traceparent in the replay's own trace")
    func replayTraces() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "trace-replay-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"{"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"}}"#,
            extra: #""trace": true, "retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stderr)")
        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        let traces = try space.logLines().filter { $0["event"] as? String == "run.start" }
            .compactMap { ($0["trace"] as? [String: Any])?["traceId"] as? String }
        #expect(traces.count == 2 && Set(traces).count == 2, "\(traces)")
        let sent = try await ServerHits.of(key, on: space.server).requests.map {
            $0.header("traceparent") ?? ""
        }
        #expect(sent.count == 2)
        for (header, trace) in zip(sent, traces) {
            #expect(header.contains("-\(trace)-"), "\(header) in \(trace)")
        }
    }

    @Test(
        "a login, its pages and their fan-out: one span a request, the export those spans, no secret in it",
        arguments: ["curl", "urlsession"])
    func syncComposition(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("trace-sync-\(backend)")
        try space.writeJob(
            tasks: CaptureTests.syncJob(key: key, total: 7, perPage: 3),
            extra: #""trace": true,"#)
        let collector = "\(key)-collector"
        let run = try await space.run(
            backend: backend,
            environment: CaptureTests.environment.merging([
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
                    space.server.url("/echo?key=\(collector)").absoluteString
            ]) { $1 })
        #expect(run.status == 0, "\(run.stderr)")

        // Every request of every kind (the login, three pages, seven details) carried a span
        // of the run's one trace, each its own.
        let requests = try await ServerHits.of(key, on: space.server).requests
        #expect(requests.count == 11, "\(requests.map(\.path))")
        var traces: Set<String> = []
        var sent: [String] = []
        for request in requests {
            let parts = try #require(request.header("traceparent"), "\(request.path)")
                .split(separator: "-").map(String.init)
            #expect(parts.count == 4)
            traces.insert(parts[1])
            sent.append(parts[2])
        }
        #expect(traces.count == 1 && Set(sent).count == sent.count)
        let runTrace = try space.logLines().first { $0["event"] as? String == "run.start" }
            .flatMap { ($0["trace"] as? [String: Any])?["traceId"] as? String }
        #expect(traces == Set([runTrace].compactMap { $0 }))

        // The export: an attempt span for each of them, and neither the captured token nor
        // the password in any of its bytes (nor in the log's).
        let post = try #require(try await ServerHits.of(collector, on: space.server).requests.first)
        let spans = try Self.spans(post.body).spans
        let attempts = spans.filter { $0["kind"] as? Int == 3 }.compactMap {
            $0["spanId"] as? String
        }
        #expect(Set(attempts) == Set(sent))
        let token = try #require(
            requests.compactMap { $0.header("Authorization") }.first?.dropFirst("Bearer ".count))
        #expect(token.count >= 8)
        let log = try #require(try ReplayTests.logFiles(space).first)
        let written = try String(contentsOf: URL(fileURLWithPath: log), encoding: .utf8)
        for (name, output) in [("export", post.body), ("log", written), ("stderr", run.stderr)] {
            for secret in [String(token), "hunter22"] {
                #expect(!output.contains(secret), "\(name)")
                #expect(!output.contains(Data(secret.utf8).base64EncodedString()), "\(name)")
            }
        }
    }

    @Test("shards of one job: each shard's requests in its own run's trace, none sent twice")
    func shardsTrace() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "trace-shards-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "t{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"},
                 "foreach": {"n": {"range": [1, 12]}}}
                """#,
            extra: #""trace": true,"#)
        for shard in ["0/2", "1/2"] {
            let run = try await space.run(["--shard", shard], backend: "curl")
            #expect(run.status == 0, "\(run.stderr)")
        }
        // Each shard's run.start names its trace; every request is in one of the two, and the
        // tasks each trace covers are that shard's.
        let starts = try space.logLines().filter { $0["event"] as? String == "run.start" }
        let traces = starts.compactMap { ($0["trace"] as? [String: Any])?["traceId"] as? String }
        #expect(traces.count == 2 && Set(traces).count == 2, "\(traces)")
        let requests = try await ServerHits.of(key, on: space.server).requests
        #expect(requests.count == 12)
        var byTrace: [String: Set<String>] = [:]
        for request in requests {
            let parts = try #require(request.header("traceparent")).split(separator: "-")
            let n = try #require(request.path.split(separator: "n=").last)
            byTrace[String(parts[1]), default: []].insert(String(n))
        }
        #expect(Set(byTrace.keys) == Set(traces))
        // Every task once, in one shard's trace only.
        let sent: Int = byTrace.values.map(\.count).reduce(0, +)
        let tasks: Set<String> = Set(byTrace.values.joined())
        #expect(sent == 12)
        #expect(tasks == Set((1...12).map { String($0) }))
    }
}
