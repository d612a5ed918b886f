import Courier
import Foundation
import Testing

@testable import CourierJobs

/// What the writer writes, the reader reads: every event and every outcome through
/// ``RunLog`` into a file and back through ``LogReader``, field by field; and the history the
/// three consumers share folds those lines as documented.
@Suite("log round trip")
struct LogRoundTripTests {
    static func attempt(
        _ number: Int, status: Int?, body: Data? = nil, error: HTTPError? = nil
    ) -> RetryAttempt {
        let request = HTTPRequest(
            url: URL(string: "http://h.example/a?x=1")!, method: .post,
            headers: ["X-Plain": "v", "Authorization": "Bearer s3cret-token"], body: body)
        let outcome: Result<HTTPResponse, HTTPError> =
            if let status {
                .success(
                    HTTPResponse(
                        status: status, headers: ["Content-Type": "application/json"],
                        body: Data("{}".utf8), url: request.url,
                        timings: HTTPTimings(
                            dns: 0.001, connect: 0.002, tls: 0.003, firstByte: 0.004, total: 0.005)
                    ))
            } else {
                .failure(error!)
            }
        return RetryAttempt(
            request: request, number: number, outcome: outcome,
            retryDelay: number == 1 ? 0.25 : nil,
            duration: 0.005, started: Date(timeIntervalSince1970: 1_700_000_000.123))
    }

    /// A log re-saved with spaces after `:` and `,` (Python's default `json.dumps`) is the
    /// same JSON: every field reads back, the headers of the request among them (trial K).
    @Test("a line with spaces between its members reads as the compact one")
    func spacedLine() throws {
        let compact =
            #"{"event":"request","ts":"2026-11-28T10:00:00.000Z","run":"r1","task":"w1","method":"POST","url":"http://127.0.0.1:1/x","requestHeaders":{"Content-Type":"application/json","Idempotency-Key":"k-1"},"only":["a","b"],"outcome":"failed"}"#
        let spaced =
            #"{"event": "request", "ts": "2026-11-28T10:00:00.000Z", "run": "r1", "task": "w1", "method": "POST", "url": "http://127.0.0.1:1/x", "requestHeaders": {"Content-Type": "application/json", "Idempotency-Key": "k-1"}, "only": [ "a", "b" ], "outcome": "failed"}"#
        let one = try #require(LogLine(bytes: Array(compact.utf8)[...]))
        let other = try #require(LogLine(bytes: Array(spaced.utf8)[...]))
        #expect(other.requestHeaders.map(\.name) == ["Content-Type", "Idempotency-Key"])
        #expect(other.requestHeaders.map(\.value) == one.requestHeaders.map(\.value))
        #expect(other.only == one.only)
    }

    @Test("every event and outcome reads back as written")
    func roundTrip() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "roundtrip-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let log = RunLog(
            writer: try LogWriter(url: file), run: "r1", job: "j",
            redactor: Redactor(secrets: ["s3cret-token"]))
        let origin = ReplayOrigin(run: "r0", task: "t-ok")
        try log.runStart(
            jobFile: "job.json", sha256: "abc", backend: .curl, replayOf: ["r0"],
            replayFrom: "job", resumedFrom: ["/logs/a.jsonl"], shard: Shard(index: 1, count: 4))
        try log.request(
            AttemptRecord(task: "t-retry", attempt: Self.attempt(1, status: 503), outcome: .retry))
        try log.request(
            AttemptRecord(
                task: "t-ok", attempt: Self.attempt(2, status: 200, body: Data("hé".utf8)),
                outcome: .ok, savedTo: "out/ok.json", replayOf: origin,
                waits: AttemptWaits(host: 1.25, rateLimit: 0.5)))
        try log.request(
            AttemptRecord(
                task: "t-page", attempt: Self.attempt(1, status: 200, body: Data([0xFF, 0x00])),
                outcome: .page, page: 1))
        try log.request(
            AttemptRecord(
                task: "t-304", attempt: Self.attempt(1, status: 304), outcome: .ok,
                notModified: true))
        try log.request(
            AttemptRecord(
                task: "t-failed",
                attempt: Self.attempt(
                    1, status: nil, error: HTTPError(.timeout, "timed out")),
                outcome: .failed))
        try log.request(
            AttemptRecord(
                task: "t-expect", attempt: Self.attempt(1, status: 200), outcome: .failed,
                failure: (kind: "expectation", message: "no /id")))
        try log.skipped(task: "t-skipped", reason: "input task login failed")
        try log.invalid(task: "t-invalid", reason: "bad URL")
        try log.token(
            url: URL(string: "https://auth.example/token")!, grant: "client_credentials",
            attempt: Self.attempt(2, status: 200), outcome: .ok)
        try log.invalid(task: "t-token", kind: "token", reason: "cannot get an access token")
        var ping = PingResult(event: .failure, exitCode: 1, started: Date())
        ping.attempts = 3
        ping.status = 503
        ping.failure = ("status", "answered 503, not 2xx")
        try log.ping(ping)
        try log.runEnd(
            duration: 1.5, total: 8, ok: 3, failed: 4, requests: 7, exitCode: 1,
            interrupted: false)

        var warnings: [String] = []
        let lines = LogReader(paths: [file.path], warn: { warnings.append($0) }).map(\.line)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(
            lines.map(\.event) == [
                LogEvent.runStart, LogEvent.request, LogEvent.request, LogEvent.request,
                LogEvent.request, LogEvent.request, LogEvent.request, LogEvent.skipped,
                LogEvent.failed, LogEvent.token, LogEvent.failed, LogEvent.ping, LogEvent.runEnd,
            ])
        #expect(lines.allSatisfy { $0.run == "r1" && $0.job == "j" })
        let start = lines[0]
        #expect(start.replayOf == ["r0"] && start.replayFrom == "job")
        #expect(start.resumedFrom == ["/logs/a.jsonl"] && start.backend == "curl")

        let byTask = Dictionary(
            lines.compactMap { line in line.task.map { ($0, line) } }, uniquingKeysWith: { $1 })
        let written: [(String, LogOutcome)] = [
            ("t-retry", .retry), ("t-ok", .ok), ("t-page", .page), ("t-304", .ok),
            ("t-failed", .failed), ("t-expect", .failed), ("t-skipped", .skipped),
            ("t-invalid", .failed), ("t-token", .failed),
        ]
        for (task, outcome) in written {
            #expect(byTask[task]?.outcome == outcome.rawValue, "\(task)")
        }
        // Every outcome the writer has was written and read.
        #expect(Set(written.map(\.1)) == Set(LogOutcome.allCases))

        let ok = try #require(byTask["t-ok"])
        #expect(ok.attempt == 2 && ok.method == "POST" && ok.url == "http://h.example/a?x=1")
        #expect(ok.status == 200 && ok.requestBody == .text("hé"))
        // Stamped when it went to the transport: its start and its 1.75 s of waits.
        #expect(ok.time == 1_700_000_001.873)
        #expect(ok.totalMs == 5 && ok.dnsMs == 1 && ok.connectMs == 2 && ok.tlsMs == 3)
        #expect(ok.firstByteMs == 4)
        #expect(ok.throttledMs == 1250, "the wait for its host")
        #expect(ok.blockedMs == 1750, "the wait for its host and the rate limit")
        #expect(byTask["t-retry"]?.throttledMs == nil, "no wait, no field")
        #expect(byTask["t-retry"]?.blockedMs == nil, "no wait, no field")
        #expect(ok.requestHeaders.contains { $0 == ("Authorization", "<redacted>") })
        #expect(ok.requestHeaders.contains { $0 == ("X-Plain", "v") })
        #expect(byTask["t-page"]?.requestBody == .base64(Data([0xFF, 0x00])))
        #expect(byTask["t-304"]?.notModified == true && byTask["t-304"]?.status == 304)
        #expect(byTask["t-failed"]?.errorKind == "timeout")
        #expect(byTask["t-failed"]?.errorMessage == "timed out")
        #expect(byTask["t-failed"]?.status == nil)
        #expect(byTask["t-expect"]?.errorKind == "expectation")
        #expect(byTask["t-skipped"]?.errorKind == "skipped")
        #expect(byTask["t-invalid"]?.errorKind == "invalidTask")
        #expect(byTask["t-token"]?.errorKind == "token")
        // A token request is read as written, and is no task's.
        let token = try #require(lines.first { $0.event == LogEvent.token })
        #expect(token.task == nil && token.url == "https://auth.example/token")
        #expect(token.status == 200 && token.outcome == "ok" && token.attempt == 2)
        // A ping is read as written, and is no task's: no reader counts it as one.
        let pingLine = try #require(lines.first { $0.event == LogEvent.ping })
        #expect(pingLine.task == nil && pingLine.url == nil && pingLine.status == 503)
        #expect(pingLine.outcome == "failed" && pingLine.errorKind == "status")
        var report = RunReport(job: "j")
        for line in lines { report.add(line) }
        report.finish()
        #expect(report.requests == 6, "the six request lines, not the ping")

        // The shared history: ok and not-modified are done; the rest are not, a retry as the
        // last word of the run (killed) included.
        var history = TaskHistory()
        for line in lines { history.add(line) }
        let key = { FNV1a.taskKey(job: "j", task: $0) }
        #expect(history.done == Set(["t-ok", "t-304"].map(key)))
        #expect(
            Set(history.finals.keys)
                == Set(
                    [
                        "t-retry", "t-page", "t-failed", "t-expect", "t-skipped", "t-invalid",
                        "t-token",
                    ].map(key)))
        #expect(history.runs == ["r1"])

        // The fields the exports read (`report --otlp`, `export --har`): sizes, the page, and
        // the response headers, kept only when asked for.
        #expect(ok.bytesSent == 3 && ok.bytesReceived == 2)
        #expect(byTask["t-page"]?.page == 1 && ok.page == nil)
        #expect(byTask["t-failed"]?.bytesReceived == 0)
        #expect(ok.responseHeaders.isEmpty, "report does not keep them")
        let detailed = LogReader(paths: [file.path], warn: { _ in }, responseHeaders: true)
            .map(\.line).filter { $0.task == "t-ok" }
        #expect(
            detailed.first?.responseHeaders.contains { $0 == ("Content-Type", "application/json") }
                == true)
    }

    @Test("a replay from the log alone decides nothing; a later run's word wins; templates settle")
    func historyRules() throws {
        func line(_ event: String, run: String, task: String? = nil, outcome: String? = nil)
            -> LogLine
        {
            LogLine.made(event, run: run, task: task, outcome: outcome)
        }
        var logOnly = line(LogEvent.runStart, run: "replay")
        logOnly.replayOf = ["run1"]
        logOnly.replayFrom = "log"
        var history = TaskHistory()
        history.add(line(LogEvent.runStart, run: "run1"))
        history.add(line(LogEvent.request, run: "run1", task: "a", outcome: "failed"))
        history.add(line(LogEvent.skipped, run: "run1", task: "c{id}", outcome: "skipped"))
        history.add(logOnly)
        history.add(line(LogEvent.request, run: "replay", task: "a", outcome: "ok"))
        let key = { FNV1a.taskKey(job: "j", task: $0) }
        #expect(!history.done.contains(key("a")), "a log-only replay's ok does not count")
        #expect(history.finals[key("c{id}")] != nil)
        history.add(line(LogEvent.runStart, run: "run2"))
        history.add(line(LogEvent.request, run: "run2", task: "c7", outcome: "ok"))
        history.add(line(LogEvent.request, run: "run2", task: "a", outcome: "ok"))
        #expect(history.finals[key("c{id}")] == nil, "the children were reached")
        #expect(history.done == [key("a"), key("c7")])
    }
}

extension LogLine {
    /// A line of job `j` with only its event, run, task and outcome, for the readers' tests.
    static func made(_ event: String, run: String, task: String? = nil, outcome: String? = nil)
        -> LogLine
    {
        var fields = LogLine.Fields()
        fields.event = event
        fields.ts = "2026-11-23T00:00:00.000Z"
        fields.run = run
        fields.job = "j"
        fields.task = task
        fields.outcome = outcome
        return LogLine(fields)!
    }
}
