import Courier
import Foundation

/// One line of a run log (`docs/log-format.md`), with the fields the log consumers read.
struct LogLine: Sendable {
    /// A logged request body.
    enum Body: Sendable, Equatable {
        case text(String)
        case base64(Data)
        /// Too large to log: only its size and SHA-256 are known.
        case omitted(bytes: Int, sha256: String)
        /// A body the line cannot give back (a hand-edited log): a `base64` that does not
        /// decode, or a `requestBody` of none of the forms above. Its bytes are unknown, and
        /// sending none in their place would be a different request. The reason, in words.
        case undecodable(String)
    }

    var event: String
    /// Seconds since 1970, from `ts`.
    var time: Double
    var run: String
    var job: String
    var task: String?
    var attempt: Int?
    var method: String?
    var url: String?
    var requestHeaders: [(name: String, value: String)] = []
    var requestBody: Body?
    var status: Int?
    /// `responseHeaders`, only when the reader was asked for them (``LogReader``): `report`
    /// never reads them, and keeping them cost every line an allocation.
    var responseHeaders: [(name: String, value: String)] = []
    /// `bytesSent`, `bytesReceived`: the request's and the response's body sizes.
    var bytesSent: Int?
    var bytesReceived: Int?
    /// `page` of a paginated task, from 1.
    var page: Int?
    /// `finalURL` and `redirects`, when redirects were followed.
    var finalURL: String?
    var redirects: Int?
    var errorKind: String?
    var errorMessage: String?
    var outcome: String?

    /// Whether this `request` line's attempt went out. Not when its host's gate refused it
    /// (`throttled`), nor when a stop ended a wait before it was sent: for its host or the rate
    /// limit, or for a retry (that line says again, as final, the attempt the retry would have
    /// followed, which its own line counted). `report` and its OTLP export count and draw only
    /// those that went out (trial P counted 5 requests where 1 was sent).
    var wentOut: Bool {
        if errorKind == "throttled" { return false }
        guard errorKind == "cancelled", let message = errorMessage else { return true }
        return CancelledWait(rawValue: message) == nil
    }
    /// The line of a retry's wait a stop cut: it says again the attempt before, which went
    /// out, and which was not retried after all.
    var cutRetry: Bool {
        errorKind == "cancelled" && errorMessage == CancelledWait.retry.rawValue
    }
    var totalMs: Double?
    var dnsMs: Double?
    var connectMs: Double?
    var tlsMs: Double?
    var firstByteMs: Double?
    /// Milliseconds the attempt waited for its host before it was sent (`throttledMs`).
    var throttledMs: Double?
    /// Milliseconds the attempt waited before it was sent, its host and the rate limit both
    /// (`blockedMs`). A line that has it was stamped (`ts`) when it went to the transport; an
    /// older line without it, before its wait at the host's gate.
    var blockedMs: Double?
    /// `idempotencyKey`: the key the write carried (docs/job-file.md, "Writes that happen
    /// once"), whatever header it went in; `nil` for a write sent without one.
    var idempotencyKey: String?
    /// `requestDigest`: what identifies the write's request beside its task id (its method,
    /// URL and body, ``RequestDigest``); `nil` on older lines and on other requests.
    var requestDigest: String?
    /// `recordsKept`: on a records task's `ok` line, how many records it kept.
    var recordsKept: Int?
    /// `savedTo`: on an `ok` line of a task that saves, the file it wrote.
    var savedTo: String?
    /// `requestBody.file`: the file a body streamed from (`bodyFile`), which the log names
    /// instead of holding its bytes.
    var requestBodyFile: String?
    /// Whether the write carried its key.
    var keyed: Bool { idempotencyKey != nil }
    /// `safe`: a POST or PATCH of a task that is no write (it reads: a search, a login).
    var safe = false
    /// A 304: the saved output was left as it was.
    var notModified = false
    /// `run.start`: the runs this one replays or resumes.
    var replayOf: [String] = []
    var resumedFrom: [String] = []
    /// `run.start` of `run --task`: the ids and globs it chose.
    var only: [String] = []
    var backend: String?
    /// `run.start` of a replay: `job` when its tasks were rebuilt from the job file (`--job`),
    /// `log` when it re-sent the logged requests alone.
    var replayFrom: String?
    /// A line of a login task sent again to renew its token: a second final line of a task
    /// within one run.
    var renewal = false
    /// What `run.start` and `run.end` say of the run as a whole; `nil` on other lines.
    var runFields: RunFields?

    /// The fields of `run.start` (what the run set out to do) and `run.end` (how it ended).
    struct RunFields: Sendable, Equatable {
        var jobFile: String?
        /// `run.start` `jobPath`: the job file's absolute path (logs before it had none).
        var jobPath: String?
        /// `run.start` `logDir`: the absolute path of the folder the log was written in, the
        /// job's history (logs before it had none).
        var logDir: String?
        /// `run.start` `tasks`: the validated task count (the whole job's, before sharding).
        var plannedTasks: Int?
        /// `run.start` `fanOut`: tasks fan out over captured values, so `plannedTasks` is a
        /// lower bound.
        var fanOut = false
        var shardIndex: Int?
        var shardCount: Int?
        /// `run.start` `oncePer`: the key of `run --once-per KEY`.
        var oncePer: String?
        /// `run.start` `window`: the `--window` range of a backfill, as given.
        var window: String?
        /// `run.start` `baseURL`: `run --base-url`, which stood for the file's `baseURL`.
        var baseURL: String?
        /// `run.start` `trace`: the run's trace id, and the caller's span it is a child of.
        var traceID: String?
        var parentSpanID: String?
        var durationMs: Double?
        /// `run.end` `tasks`.
        var total: Int?
        var ok: Int?
        var failed: Int?
        var alreadyDone: Int?
        /// `run.end` `tasks.ignored`: tasks ok on a response an `onResponse` rule ignores.
        var ignored: Int?
        /// `run.end` `checks`: the data checks the run failed.
        var checks: [DataCheckVerdict.Failure] = []
        /// `run.end` `recordsNotWritten`: records files the run could not write.
        var recordsNotWritten: Int?
        var exitCode: Int?
        var interrupted = false
        /// `run.end` `tasksUnlisted`: the run stopped before a fan-out had listed all its
        /// tasks, so `tasks` counts fewer than did not run.
        var tasksUnlisted = false
    }

    /// The raw values a scanner found, before checks.
    struct Fields {
        var event, ts, run, job, task, method, url, outcome, backend: String?
        var attempt, status, bytesSent, bytesReceived, page, redirects, recordsKept: Int?
        var finalURL: String?
        /// Whether to keep `responseHeaders` (most consumers never read them).
        var keepResponseHeaders = false
        var responseHeaders: [(name: String, value: String)] = []
        var totalMs, dnsMs, connectMs, tlsMs, firstByteMs, omittedBytes, throttledMs: Double?
        var blockedMs: Double?
        var idempotencyKey, requestDigest, savedTo: String?
        var safe = false
        var requestHeaders: [(name: String, value: String)] = []
        var bodyText, bodyBase64, bodySHA256, bodyFile: String?
        /// Whether the line has a `requestBody` at all, whatever it holds.
        var bodyPresent = false
        var errorKind, errorMessage: String?
        var replayOf: [String] = []
        var resumedFrom: [String] = []
        var only: [String] = []
        var notModified = false
        var replayFrom: String?
        var renewal = false
        var runFields = RunFields()
    }

    /// A log line from its JSON text; `nil` when it is not JSON or not a log line (no `event`,
    /// `run` or valid `ts`).
    init?(bytes: ArraySlice<UInt8>, responseHeaders: Bool = false) {
        guard let line = LogLineScanner.parse(bytes, responseHeaders: responseHeaders) else {
            return nil
        }
        self = line
    }

    init?(_ fields: Fields) {
        guard let event = fields.event, let run = fields.run, let ts = fields.ts,
            let time = Self.parseTime(ts)
        else { return nil }
        self.event = event
        self.time = time
        self.run = run
        job = fields.job ?? ""
        task = fields.task
        attempt = fields.attempt
        method = fields.method
        url = fields.url
        requestHeaders = fields.requestHeaders
        let forms = [fields.bodyText != nil, fields.bodyBase64 != nil, fields.omittedBytes != nil]
        if forms.filter({ $0 }).count > 1 {
            // Two forms of one body: which was sent cannot be told (trial M sent the text).
            requestBody = .undecodable("it has more than one of text, base64 and omittedBytes")
        } else if let text = fields.bodyText {
            requestBody = .text(text)
        } else if let encoded = fields.bodyBase64 {
            // Only the form courier writes: Foundation also takes padding past a multiple of
            // four (`QUJD=`), which a hand edit or a cut line leaves, as if whole (trial M).
            requestBody =
                Data(base64Encoded: encoded).flatMap {
                    $0.base64EncodedString() == encoded ? Body.base64($0) : nil
                }
                ?? .undecodable(
                    "its base64 does not decode (standard base64, padded to a multiple of 4)")
        } else if let count = fields.omittedBytes {
            requestBody = .omitted(bytes: Int(count), sha256: fields.bodySHA256 ?? "")
        } else if fields.bodyPresent {
            requestBody = .undecodable("it has no text, base64 or omittedBytes of the right type")
        }
        status = fields.status
        responseHeaders = fields.responseHeaders
        bytesSent = fields.bytesSent
        bytesReceived = fields.bytesReceived
        page = fields.page
        finalURL = fields.finalURL
        redirects = fields.redirects
        errorKind = fields.errorKind
        errorMessage = fields.errorMessage
        outcome = fields.outcome
        totalMs = fields.totalMs
        dnsMs = fields.dnsMs
        connectMs = fields.connectMs
        tlsMs = fields.tlsMs
        firstByteMs = fields.firstByteMs
        throttledMs = fields.throttledMs
        blockedMs = fields.blockedMs
        idempotencyKey = fields.idempotencyKey
        requestDigest = fields.requestDigest
        recordsKept = fields.recordsKept
        savedTo = fields.savedTo
        requestBodyFile = fields.bodyFile
        safe = fields.safe
        notModified = fields.notModified
        replayOf = fields.replayOf
        resumedFrom = fields.resumedFrom
        only = fields.only
        backend = fields.backend
        replayFrom = fields.replayFrom
        renewal = fields.renewal
        if event == "run.start" || event == "run.end" { runFields = fields.runFields }
    }

    /// The body bytes, when the log holds them whole.
    var bodyBytes: Data? {
        switch requestBody {
        case .text(let text): Data(text.utf8)
        case .base64(let data): data
        case .omitted, .undecodable, nil: nil
        }
    }

    /// `2026-11-22T04:15:21.147Z` as seconds since 1970.
    static func parseTime(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[10] == 0x54, bytes[23] == 0x5A else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millis = number(20..<23)
        else { return nil }
        let days = CivilDays.from(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second) + Double(millis) / 1000
    }
}
