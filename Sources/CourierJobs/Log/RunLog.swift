import Courier
import Foundation

/// Builds and writes the lines of one run's log (`docs/log-format.md`).
struct RunLog: Sendable {
    let writer: LogWriter
    let run: String
    let job: String
    let redactor: Redactor
    /// Where each `request` line's figures are added up for the metrics file, if there is one.
    let figures: RequestFigures?
    /// `--record`: where each attempt's answer is kept as it is logged.
    var recorder: Recorder?
    /// Request bodies up to this size are logged; larger ones by size and hash.
    static let bodyLimit = 1 << 20

    init(
        writer: LogWriter, run: String, job: String, redactor: Redactor,
        figures: RequestFigures? = nil
    ) {
        self.writer = writer
        self.run = run
        self.job = job
        self.redactor = redactor
        self.figures = figures
    }

    /// - Parameters:
    ///   - tasks: the tasks the run means to settle, as validation counted them (the whole
    ///     job's, before sharding): a killed run's log says how far it got out of how many.
    ///   - fanOut: whether tasks fan out over captured values, which validation cannot count
    ///     (`tasks` is then a lower bound).
    func runStart(
        jobFile: String, jobPath: String? = nil, logDir: String? = nil, sha256: String,
        backend: Backend,
        tasks: Int? = nil,
        fanOut: Bool = false, replayOf: [String] = [], replayFrom: String? = nil,
        resumedFrom: [String] = [], shard: Shard? = nil, only: [String] = [],
        oncePer: String? = nil, window: String? = nil, baseURL: String? = nil,
        trace: TraceSettings? = nil
    ) throws {
        var fields: [(String, JSONWriter.Value)] = [
            ("event", .string(LogEvent.runStart)), ("ts", .string(Timestamp.rfc3339(Date()))),
            ("run", .string(run)), ("job", .string(job)), ("jobFile", .string(jobFile)),
            ("jobSHA256", .string(sha256)), ("backend", .string(backend.rawValue)),
            ("version", .string(CourierVersion.current)),
        ]
        // The file's absolute path besides, so that a repair line read from the log works
        // from any folder (`jobFile` is as the command line gave it).
        if let jobPath { fields.insert(("jobPath", .string(jobPath)), at: 5) }
        // Where the history is, so that a copy of the log repaired elsewhere finds it, though
        // `--log-dir` put it outside the job's home (trial LLL).
        if let logDir { fields.append(("logDir", .string(logDir))) }
        if let tasks { fields.append(("tasks", .int(tasks))) }
        if fanOut { fields.append(("fanOut", .bool(true))) }
        if !replayOf.isEmpty { fields.append(("replayOf", .array(replayOf.map { .string($0) }))) }
        if let replayFrom { fields.append(("replayFrom", .string(replayFrom))) }
        if !resumedFrom.isEmpty {
            fields.append(("resumedFrom", .array(resumedFrom.map { .string($0) })))
        }
        if !only.isEmpty { fields.append(("only", .array(only.map { .string($0) }))) }
        if let oncePer { fields.append(("oncePer", .string(oncePer))) }
        if let window { fields.append(("window", .string(window))) }
        // As the job's secrets allow: the same URL may be an `${env:…}` of the file.
        if let baseURL { fields.append(("baseURL", .string(redactor.scrub(baseURL)))) }
        if let shard {
            fields.append(
                ("shard", .object([("index", .int(shard.index)), ("count", .int(shard.count))])))
        }
        if let trace {
            // The run's trace: an export of this log puts the run's spans in it, under the
            // caller's span, and each attempt's span id is its logged `traceparent`'s.
            var value: [(String, JSONWriter.Value)] = [("traceId", .string(trace.traceID))]
            if let parent = trace.parentSpanID { value.append(("parentSpanId", .string(parent))) }
            value.append(("propagated", .bool(trace.propagates)))
            fields.append(("trace", .object(value)))
        }
        try write(fields)
    }

    func runEnd(
        duration: TimeInterval, total: Int, ok: Int, failed: Int, requests: Int, exitCode: Int32,
        interrupted: Bool, stoppedBy: String? = nil, alreadyDone: Int? = nil, ignored: Int = 0,
        unlisted: Bool = false, checks: [DataCheckVerdict.Failure] = [], notReplayed: Int = 0,
        recordsNotWritten: Int = 0
    ) throws {
        var tasks: [(String, JSONWriter.Value)] = [
            ("total", .int(total)), ("ok", .int(ok)), ("failed", .int(failed)),
        ]
        if let alreadyDone { tasks.append(("alreadyDone", .int(alreadyDone))) }
        if ignored > 0 { tasks.append(("ignored", .int(ignored))) }
        if notReplayed > 0 { tasks.append(("notReplayed", .int(notReplayed))) }
        var fields: [(String, JSONWriter.Value)] = [
            ("event", .string(LogEvent.runEnd)), ("ts", .string(Timestamp.rfc3339(Date()))),
            ("run", .string(run)), ("job", .string(job)), ("durationMs", .double(duration * 1000)),
            ("tasks", .object(tasks)),
            ("requests", .int(requests)), ("exitCode", .int(Int(exitCode))),
            ("interrupted", .bool(interrupted)),
        ]
        if let stoppedBy { fields.append(("stoppedBy", .string(stoppedBy))) }
        if unlisted { fields.append(("tasksUnlisted", .bool(true))) }
        // Every task ok and exit 1: the line says why, and a report that the night is not done
        // (trial UUU: `report` said complete).
        if recordsNotWritten > 0 { fields.append(("recordsNotWritten", .int(recordsNotWritten))) }
        if !checks.isEmpty {
            fields.append(
                (
                    "checks",
                    .array(
                        checks.map {
                            .object([
                                ("check", .string($0.check)), ("message", .string($0.message)),
                            ])
                        })
                ))
        }
        // Lines were lost (a full disk that had room again for this one): the file says so.
        // The lines still waiting go out first, so that a failure among them is named here.
        writer.flush()
        if let failure {
            fields.append(("incomplete", .object([("reason", .string(failure))])))
        }
        try write(fields, now: true)
        writer.sync()
    }

    /// A task that did not run because a task it needed did not succeed: no request was
    /// sent. (`--resume` runs it again, with its inputs.)
    func skipped(task: String, reason: String, kind: String = "skipped") throws {
        try write([
            ("event", .string(LogEvent.skipped)), ("ts", .string(Timestamp.rfc3339(Date()))),
            ("run", .string(run)), ("job", .string(job)), ("task", .string(task)),
            ("outcome", .string(LogOutcome.skipped.rawValue)),
            ("error", .object([("kind", .string(kind)), ("message", .string(reason))])),
        ])
    }

    /// A write a replay from the log alone sent, answered 2xx, with nothing else to do: done
    /// by that answer (``WriteRule/doneByAnswer(_:key:capturing:writes:)``), and said so, for
    /// the history to count it done. Nothing was sent.
    func doneByAnswer(task: String, reason: String = "answeredByReplay") throws {
        try write([
            ("event", .string(LogEvent.skipped)), ("ts", .string(Timestamp.rfc3339(Date()))),
            ("run", .string(run)), ("job", .string(job)), ("task", .string(task)),
            ("outcome", .string(LogOutcome.ok.rawValue)), ("reason", .string(reason)),
        ])
    }

    /// A task that could not be built (a captured value that makes no valid URL), or could
    /// not be sent (`kind` `token`: no OAuth2 access token could be had): nothing was sent for
    /// it, and the task failed. Every task `run.end` counts has a final line.
    func invalid(
        task: String, kind: String = "invalidTask", reason: String, replayOf: ReplayOrigin? = nil
    ) throws {
        var fields: [(String, JSONWriter.Value)] = [
            ("event", .string(LogEvent.failed)), ("ts", .string(Timestamp.rfc3339(Date()))),
            ("run", .string(run)), ("job", .string(job)), ("task", .string(task)),
            ("outcome", .string(LogOutcome.failed.rawValue)),
            ("error", .object([("kind", .string(kind)), ("message", .string(reason))])),
        ]
        if let replayOf {
            fields.append(
                (
                    "replayOf",
                    .object([("run", .string(replayOf.run)), ("task", .string(replayOf.task))])
                ))
        }
        try write(fields)
    }

    /// One attempt of an OAuth2 token request: where it went, the grant, the status and
    /// timings, and why it failed. Never its headers or bodies: they are the client's secret
    /// and the tokens.
    func token(
        url: URL, grant: String, attempt: RetryAttempt, outcome: LogOutcome,
        failure: (kind: String, message: String)? = nil
    ) throws {
        var line = JSONLineBuilder()
        line.string("event", LogEvent.token)
        line.timestamp("ts", attempt.started)
        line.string("run", run)
        line.string("job", job)
        line.string("url", url.absoluteString)
        line.string("grant", grant)
        line.int("attempt", attempt.number)
        var timings = HTTPTimings(total: attempt.duration)
        if case .success(let response) = attempt.outcome {
            line.int("status", response.status)
            timings = response.timings
            if timings.total == 0 { timings.total = attempt.duration }
        }
        line.attemptEnd(attempt, timings: timings, outcome: outcome, failure: failure)
        try write(line: line.finishLine())
    }

    /// A ping that said the run started or how it ended (`notify`, ``RunPings``): which, how
    /// many attempts it took, the last status, and why it failed. Never its URL: a ping URL
    /// is a secret.
    func ping(_ result: PingResult) throws {
        var line = JSONLineBuilder()
        line.string("event", LogEvent.ping)
        line.timestamp("ts", result.started)
        line.string("run", run)
        line.string("job", job)
        line.string("ping", result.event.rawValue)
        if let exitCode = result.exitCode { line.int("exitCode", Int(exitCode)) }
        line.int("attempts", result.attempts)
        if let status = result.status { line.int("status", status) }
        line.milliseconds("durationMs", result.duration)
        if let failure = result.failure {
            line.value(
                "error",
                .object([("kind", .string(failure.kind)), ("message", .string(failure.message))]))
        }
        line.string("outcome", (result.failure == nil ? LogOutcome.ok : .failed).rawValue)
        try write(line: line.finishLine())
    }

    /// The request's body as logged: its bytes (text or base64, or only their size and
    /// SHA-256 when large), or for a body streamed from files (`bodyFile`), its size and where
    /// it came from, never read again to be logged.
    private func addBody(
        of request: HTTPRequest, streamedBytes: Int?, to line: inout JSONLineBuilder
    ) {
        if let body = request.body, !body.isEmpty {
            line.value("requestBody", bodyValue(body))
        } else if let streamed = request.streamedBody, let bytes = streamedBytes {
            var fields: [(String, JSONWriter.Value)] = [("omittedBytes", .int(bytes))]
            for case .file(let url) in streamed.parts {
                fields.append(("file", .string(url.path)))
                break
            }
            line.value("requestBody", .object(fields))
        }
    }

    /// The response's status, where it came from after redirects, and its headers (secret
    /// ones redacted); its timings and body bytes, for the attempt's end.
    private func addResponse(
        of attempt: RetryAttempt, sent request: HTTPRequest, to line: inout JSONLineBuilder
    ) -> (HTTPTimings, received: Int) {
        guard case .success(let response) = attempt.outcome else {
            // A redirect not followed: the status that came, though no response is had.
            if case .failure(let error) = attempt.outcome, let status = error.status {
                line.int("status", status)
            }
            return (HTTPTimings(total: attempt.duration), 0)
        }
        line.int("status", response.status)
        if response.redirectCount > 0 {
            // `status` is the last hop's: say where that was.
            line.string("finalURL", redactor.redirectTarget(of: response, for: request))
            line.int("redirects", response.redirectCount)
        }
        line.headers("responseHeaders", response.headers, placeholder: Redactor.placeholder) {
            SecretHeaders.isSecret($0)
        }
        // A compressed body whose end the backend could not check (URLSession): read, and
        // said so, not failed (docs/log-format.md).
        if let coding = response.bodyEndUnchecked { line.string("bodyEndUnchecked", coding) }
        var timings = response.timings
        if timings.total == 0 { timings.total = attempt.duration }
        return (timings, response.bodyCount)
    }

    /// One attempt of one task: its `request` line. Its `ts` is the attempt's start plus what
    /// it waited (when the request went out), `blockedMs` the whole wait and `throttledMs` its
    /// host's part, each written when not zero.
    func request(_ record: AttemptRecord) throws {
        let (attempt, outcome, waits) = (record.attempt, record.outcome, record.waits)
        let request = attempt.request
        let sent: HTTPHeaders
        if case .success(let response) = attempt.outcome, !response.requestHeaders.isEmpty {
            sent = response.requestHeaders
        } else {
            sent = Self.sentHeaders(request)
        }
        var line = JSONLineBuilder()
        line.string("event", LogEvent.request)
        line.timestamp("ts", attempt.started.addingTimeInterval(waits.beforeSent))
        line.string("run", run)
        line.string("job", job)
        line.string("task", record.task)
        line.int("attempt", attempt.number)
        if let page = record.page { line.int("page", page) }
        line.string("method", request.method.rawValue)
        line.string("url", request.displayURL.absoluteString)
        Self.addWrite(
            &line, request: request, keyHeader: record.keyHeader, digest: record.requestDigest)
        if record.safe, WriteSettings.writes(request.method.rawValue) {
            line.value("safe", .bool(true))
        }
        // The fields as they went on the wire, defaults and cookies included
        // (docs/transports.md); computed the same way when no response came back.
        line.headers("requestHeaders", sent, placeholder: Redactor.placeholder) { name in
            redactor.isSecretHeader(name, in: request)
        }
        let streamedBytes = request.streamedBody.map(Self.size)
        addBody(of: request, streamedBytes: streamedBytes, to: &line)
        let (timings, received) = addResponse(of: attempt, sent: request, to: &line)
        // An attempt that never went out sent no body (trial P: its POST line said it had).
        let sentBytes =
            attempt.wentOut && !attempt.failedBeforeSending
            ? request.body?.count ?? streamedBytes ?? 0 : 0
        line.int("bytesSent", sentBytes)
        line.int("bytesReceived", received)
        line.attemptEnd(
            attempt, timings: timings, outcome: outcome, failure: record.failure, waits: waits)
        if let figures {
            var status: Int?
            if case .success(let response) = attempt.outcome { status = response.status }
            figures.record(
                status: status, retried: outcome == .retry, bytesSent: sentBytes,
                bytesReceived: received, totalMs: timings.total * 1000)
        }
        if let savedTo = record.savedTo { line.string("savedTo", savedTo) }
        if let kept = record.recordsKept { line.int("recordsKept", kept) }
        if record.notModified { line.value("notModified", .bool(true)) }
        // The `onResponse` rule the response matched: what it made of it.
        if let action = record.action { line.string("action", action) }
        // A rejected token (this attempt's 401) that was renewed before the next attempt, and
        // the login request sent again to renew it.
        if let renewedToken = record.renewedToken { line.string("renewedToken", renewedToken) }
        if record.renewal { line.value("renewal", .bool(true)) }
        if let warning = record.warning { line.string("warning", warning) }
        if let replayOf = record.replayOf {
            line.value(
                "replayOf",
                .object([("run", .string(replayOf.run)), ("task", .string(replayOf.task))]))
        }
        if let recorder {
            switch attempt.outcome {
            case .success(let response):
                recorder.record(
                    request: request, response: response,
                    body: Self.body(of: response, savedTo: record.savedTo), redactor: redactor)
            case .failure(let error):
                recorder.record(request: request, error: error, redactor: redactor)
            }
        }
        // A request that may not be sent twice has its line on file before the task goes on:
        // `--resume` sends again every task whose line is missing.
        try write(line: line.finishLine(), now: !request.isRepeatable)
    }

    /// What the transport sent: the request's fields and the transport's defaults.
    static func sentHeaders(_ request: HTTPRequest) -> HTTPHeaders {
        (try? WireRequest(request).headers) ?? request.headers
    }

    private func bodyValue(_ body: Data) -> JSONWriter.Value {
        guard body.count <= Self.bodyLimit else {
            return .object([
                ("omittedBytes", .int(body.count)), ("sha256", .string(SHA256.hex(of: body))),
            ])
        }
        if let text = String(data: body, encoding: .utf8) {
            return .object([("text", .string(text))])
        }
        return .object([("base64", .string(body.base64EncodedString()))])
    }

    /// Why a line could not be written, if one could not: a run must not look clean when its
    /// record is incomplete. The writer keeps it, for the lines it wrote later too.
    var failure: String? { writer.failure }

    /// Writes every line the writer still holds (``LogWriter``'s batching): before anything
    /// that must not be on disk ahead of the lines it follows (records files, state).
    func flush() { writer.flush() }

    private func write(_ fields: [(String, JSONWriter.Value)], now: Bool = false) throws {
        var line = JSONWriter.bytes(.object(fields))
        line.append(0x0A)
        try write(line: line, now: now)
    }

    /// Writes a whole line, its newline included; with `now`, before returning.
    func write(line: [UInt8], now: Bool = false) throws {
        // Redaction happens here, on the finished line, so no field can skip it.
        try writer.write(endedLine: redactor.scrubJSON(line), now: now)
    }
}
