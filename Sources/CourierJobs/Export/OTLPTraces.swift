import Courier
import Foundation

/// Runs as OpenTelemetry traces, in OTLP/JSON (`ExportTraceServiceRequest`): one trace per run,
/// a root span for the run and a CLIENT span per request attempt under it, with the HTTP
/// semantic conventions' attribute names (docs/report.md, "OpenTelemetry").
///
/// A run whose `run.start` names its trace (`trace`: `--trace`, the job's `"trace"`,
/// `TRACEPARENT`) is exported in that trace, under the caller's span, and each attempt's span
/// id is the one its logged `traceparent` carried to the server, so that the server's spans
/// join the run's. Every other id is derived from the run id, so the same logs always give the
/// same export. Values come from the log as written: its URLs and messages are already
/// redacted, and nothing is added to them.
struct OTLPTraces {
    /// One run's spans as they are read, and what its first and last lines said.
    private struct Run {
        var job: String
        var start: Double
        var end: Double
        var attributes: [(String, JSONWriter.Value)] = []
        var ended = false
        var exitCode: Int?
        var spans: [JSONWriter.Value] = []
        /// `run.start`'s `trace`, when it has one.
        var traceID: String?
        var parentSpanID: String?
    }

    private var runs: [String: Run] = [:]
    private var runOrder: [String] = []
    /// `service.name` of every span's resource (`OTEL_SERVICE_NAME`, else `courier`).
    let serviceName: String

    init(serviceName: String = "courier") {
        self.serviceName = serviceName
    }

    mutating func add(_ line: LogLine) {
        if runs[line.run] == nil {
            runs[line.run] = Run(job: line.job, start: line.time, end: line.time)
            runOrder.append(line.run)
        }
        var run = runs[line.run]!
        runs[line.run] = nil  // edited in place, without a copy of its spans
        switch line.event {
        case "run.start":
            run.start = line.time
            run.attributes = Self.runStartAttributes(line)
            run.traceID = line.runFields?.traceID
            run.parentSpanID = line.runFields?.parentSpanID
        case "run.end":
            run.ended = true
            run.end = max(run.end, line.time)
            run.exitCode = line.runFields?.exitCode
            run.attributes += Self.runEndAttributes(line)
        case "request" where line.wentOut:
            let span = Self.attemptSpan(
                line, index: run.spans.count,
                traceID: run.traceID ?? Self.traceID(run: line.run))
            run.end = max(run.end, span.end)
            run.spans.append(span.value)
        default:
            break
        }
        runs[line.run] = run
    }

    /// The attempts' spans gathered so far as an export of their own, taken out: a long
    /// run's export goes in parts, its run's span with the last (``value()``).
    mutating func takeAttemptSpans() -> JSONWriter.Value {
        defer {
            for id in runOrder { runs[id]?.spans.removeAll() }
        }
        return value(withRuns: false)
    }

    /// Attempt spans gathered and not yet taken.
    var attemptSpans: Int { runs.values.reduce(0) { $0 + $1.spans.count } }

    /// The `ExportTraceServiceRequest`: a `resourceSpans` per job, in the order first seen.
    func value() -> JSONWriter.Value { value(withRuns: true) }

    private func value(withRuns: Bool) -> JSONWriter.Value {
        var jobs: [String] = []
        var spansByJob: [String: [JSONWriter.Value]] = [:]
        for id in runOrder {
            guard let run = runs[id] else { continue }
            if spansByJob[run.job] == nil { jobs.append(run.job) }
            if withRuns { spansByJob[run.job, default: []].append(Self.runSpan(id, run)) }
            spansByJob[run.job, default: []].append(contentsOf: run.spans)
        }
        return .object([
            (
                "resourceSpans",
                .array(
                    jobs.map { job in
                        .object([
                            (
                                "resource",
                                .object([
                                    (
                                        "attributes",
                                        Self.attributes([
                                            ("service.name", .string(serviceName)),
                                            ("service.version", .string(CourierVersion.current)),
                                            ("courier.job", .string(job)),
                                        ])
                                    )
                                ])
                            ),
                            (
                                "scopeSpans",
                                .array([
                                    .object([
                                        (
                                            "scope",
                                            .object([
                                                ("name", .string("courier")),
                                                ("version", .string(CourierVersion.current)),
                                            ])
                                        ),
                                        ("spans", .array(spansByJob[job] ?? [])),
                                    ])
                                ])
                            ),
                        ])
                    })
            )
        ])
    }

    // MARK: - Spans

    /// OTLP's `Span.SpanKind` and `Status.StatusCode`, as the JSON encoding writes enums.
    private static let kindInternal = 1
    private static let kindClient = 3
    private static let statusError = 2

    private static func runSpan(_ id: String, _ run: Run) -> JSONWriter.Value {
        var fields: [(String, JSONWriter.Value)] = [
            ("traceId", .string(run.traceID ?? traceID(run: id))),
            ("spanId", .string(spanID(run: id, index: nil))),
        ]
        if let parent = run.parentSpanID { fields.append(("parentSpanId", .string(parent))) }
        fields += [
            ("name", .string("courier run \(run.job)")),
            ("kind", .int(kindInternal)),
            ("startTimeUnixNano", .string(nanoseconds(run.start))),
            ("endTimeUnixNano", .string(nanoseconds(run.end))),
            (
                "attributes",
                attributes(
                    [("courier.job", .string(run.job)), ("courier.run", .string(id))]
                        + run.attributes + (run.ended ? [] : [("courier.killed", .bool(true))]))
            ),
        ]
        if let code = run.exitCode, code != 0 {
            fields.append(
                (
                    "status",
                    .object([("code", .int(statusError)), ("message", .string("exit \(code)"))])
                )
            )
        }
        return .object(fields)
    }

    private static func runStartAttributes(_ line: LogLine) -> [(String, JSONWriter.Value)] {
        var values: [(String, JSONWriter.Value)] = []
        if let backend = line.backend { values.append(("courier.backend", .string(backend))) }
        if let planned = line.runFields?.plannedTasks {
            values.append(("courier.tasks.planned", .int(planned)))
        }
        if let index = line.runFields?.shardIndex, let count = line.runFields?.shardCount {
            values.append(("courier.shard", .string("\(index)/\(count)")))
        }
        if !line.replayOf.isEmpty {
            values.append(("courier.replay_of", .string(line.replayOf.joined(separator: ","))))
        }
        return values
    }

    private static func runEndAttributes(_ line: LogLine) -> [(String, JSONWriter.Value)] {
        guard let run = line.runFields else { return [] }
        var values: [(String, JSONWriter.Value)] = []
        if let total = run.total { values.append(("courier.tasks.total", .int(total))) }
        if let ok = run.ok { values.append(("courier.tasks.ok", .int(ok))) }
        if let failed = run.failed { values.append(("courier.tasks.failed", .int(failed))) }
        if let code = run.exitCode { values.append(("courier.exit_code", .int(code))) }
        values.append(("courier.interrupted", .bool(run.interrupted)))
        return values
    }

    /// One attempt's span, and when it ended (its start, its wait at the host's gate and its
    /// exchange).
    private static func attemptSpan(_ line: LogLine, index: Int, traceID: String)
        -> (value: JSONWriter.Value, end: Double)
    {
        // A line with `blockedMs` was stamped when it went to the transport; an older one,
        // before its wait at the host's gate, which its span then includes.
        let waited = line.blockedMs == nil ? (line.throttledMs ?? 0) : 0
        let end = line.time + (waited + (line.totalMs ?? 0)) / 1000
        let method = line.method ?? "HTTP"
        var values: [(String, JSONWriter.Value)] = [("http.request.method", .string(method))]
        if let url = line.url {
            values.append(("url.full", .string(url)))
            // A URL whose origin was a secret (`<redacted>`) does not parse: it has no parts.
            if let components = URLComponents(string: url), let scheme = components.scheme,
                let host = components.host, !host.isEmpty
            {
                values.append(("server.address", .string(host)))
                if let port = components.port
                    ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
                {
                    values.append(("server.port", .int(port)))
                }
                values.append(("url.scheme", .string(scheme)))
            }
        }
        if let status = line.status { values.append(("http.response.status_code", .int(status))) }
        let errorType = errorType(line)
        if let errorType { values.append(("error.type", .string(errorType))) }
        if let attempt = line.attempt, attempt > 1 {
            values.append(("http.request.resend_count", .int(attempt - 1)))
        }
        if line.status != nil, let received = line.bytesReceived {
            values.append(("http.response.body.size", .int(received)))
        }
        if let sent = line.bytesSent { values.append(("http.request.body.size", .int(sent))) }
        if let task = line.task { values.append(("courier.task", .string(task))) }
        if let outcome = line.outcome { values.append(("courier.outcome", .string(outcome))) }
        if let page = line.page { values.append(("courier.page", .int(page))) }
        if let attempt = line.attempt { values.append(("courier.attempt", .int(attempt))) }
        if let throttled = line.throttledMs {
            values.append(("courier.throttled_ms", .double(throttled)))
        }
        if let blocked = line.blockedMs {
            values.append(("courier.blocked_ms", .double(blocked)))
        }
        // The span the server was told of: the attempt's logged `traceparent`, in this trace.
        let sent = line.requestHeaders.last { $0.name.lowercased() == "traceparent" }
            .flatMap { TraceContext(traceparent: $0.value) }
        let span = sent?.traceID == traceID ? sent!.spanID : spanID(run: line.run, index: index)
        var fields: [(String, JSONWriter.Value)] = [
            ("traceId", .string(traceID)),
            ("spanId", .string(span)),
            ("parentSpanId", .string(spanID(run: line.run, index: nil))),
            // The semantic conventions' name for an HTTP client span is its method.
            ("name", .string(method)),
            ("kind", .int(kindClient)),
            ("startTimeUnixNano", .string(nanoseconds(line.time))),
            ("endTimeUnixNano", .string(nanoseconds(end))),
            ("attributes", attributes(values)),
        ]
        if errorType != nil || line.outcome == "failed" {
            var status: [(String, JSONWriter.Value)] = [("code", .int(statusError))]
            if let message = line.errorMessage { status.append(("message", .string(message))) }
            fields.append(("status", .object(status)))
        }
        return (.object(fields), end)
    }

    /// `error.type`: the log's error kind, or the status as text for a 4xx or 5xx without one.
    static func errorType(_ line: LogLine) -> String? {
        if let kind = line.errorKind { return kind }
        if let status = line.status, status >= 400 { return String(status) }
        return nil
    }

    // MARK: - Encoding

    /// OTLP attributes: `{key, value: {stringValue | intValue | boolValue | doubleValue}}`;
    /// an `int64` is a string in the JSON encoding of protobuf.
    private static func attributes(_ values: [(String, JSONWriter.Value)]) -> JSONWriter.Value {
        .array(
            values.map { key, value in
                let typed: (String, JSONWriter.Value)
                switch value {
                case .int(let number): typed = ("intValue", .string(String(number)))
                case .bool(let flag): typed = ("boolValue", .bool(flag))
                case .double(let number): typed = ("doubleValue", .double(number))
                default: typed = ("stringValue", value)
                }
                return .object([("key", .string(key)), ("value", .object([typed]))])
            })
    }

    /// Nanoseconds since 1970 as decimal text (a `fixed64`), to the microsecond: a span's end
    /// is its start plus the log's `totalMs`, whose microseconds a whole millisecond lost
    /// (trial W: 1.833 ms became 2).
    static func nanoseconds(_ seconds: Double) -> String {
        String(Int64((seconds * 1_000_000).rounded()) * 1_000)
    }

    /// 16 bytes as 32 hex digits, from the run id alone.
    static func traceID(run: String) -> String {
        String(SHA256.hex(of: Array("courier.trace\n\(run)".utf8)).prefix(32))
    }

    /// 8 bytes as 16 hex digits: the run's span (`index` nil) or its `index`th attempt.
    static func spanID(run: String, index: Int?) -> String {
        let name = index.map { "courier.attempt\n\(run)\n\($0)" } ?? "courier.run\n\(run)"
        return String(SHA256.hex(of: Array(name.utf8)).prefix(16))
    }
}
