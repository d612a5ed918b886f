import Courier
import Foundation

/// Run logs as a HAR 1.2 archive (`courier export --har`): a page per run, an entry per request
/// attempt, for browsers' network panels and HAR viewers.
///
/// Everything comes from the log as written, so secrets stay `<redacted>`. What the log does not
/// keep is said rather than guessed: response bodies (`content` has no `text`), the HTTP
/// version and reason phrase (empty strings), header block sizes (-1).
struct HARExport {
    private var pages: [JSONWriter.Value] = []
    /// Each entry with when it started: the log has them in the order they ended.
    private var entries: [(started: Double, value: JSONWriter.Value)] = []
    private var pagesSeen: Set<String> = []

    /// What the exporter says of itself and of what is missing, in `log.comment`.
    static let comment =
        "Exported from courier run logs. Response bodies, HTTP versions, reason phrases and "
        + "header sizes are not in the logs; secret values are <redacted>."

    mutating func add(_ line: LogLine) {
        switch line.event {
        case "run.start":
            addPage(line)
        case "request":
            if !pagesSeen.contains(line.run) { addPage(line) }
            entries.append((Self.started(line), Self.entry(line)))
        default:
            break
        }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// The archive: `{"log": {version, creator, pages, entries, comment}}`.
    func value() -> JSONWriter.Value {
        .object([
            (
                "log",
                .object([
                    ("version", .string("1.2")),
                    (
                        "creator",
                        .object([
                            ("name", .string("courier")),
                            ("version", .string(CourierVersion.current)),
                        ])
                    ),
                    ("pages", .array(pages)),
                    // HAR 1.2 asks for the oldest first, and `import --har` makes its tasks in
                    // this order: as ended, a job's first task could come last.
                    (
                        "entries",
                        .array(
                            entries.enumerated().sorted {
                                ($0.element.started, $0.offset) < ($1.element.started, $1.offset)
                            }.map(\.element.value))
                    ),
                    ("comment", .string(Self.comment)),
                ])
            )
        ])
    }

    private mutating func addPage(_ line: LogLine) {
        guard pagesSeen.insert(line.run).inserted else { return }
        pages.append(
            .object([
                ("startedDateTime", .string(ReportTime.rfc3339(line.time))),
                ("id", .string(line.run)),
                ("title", .string("courier run \(line.run) of \(line.job)")),
                ("pageTimings", .object([])),
            ]))
    }

    // MARK: - Entries

    /// When the entry started: HAR's entry starts with its `blocked` time; the log's `ts` is
    /// when the request went to the transport, after its wait (an older line without
    /// `blockedMs`: before).
    private static func started(_ line: LogLine) -> Double {
        line.time - (line.blockedMs ?? 0) / 1000
    }

    private static func entry(_ line: LogLine) -> JSONWriter.Value {
        let timings = Timings(line)
        var fields: [(String, JSONWriter.Value)] = [
            ("pageref", .string(line.run)),
            ("startedDateTime", .string(ReportTime.rfc3339(started(line)))),
            ("time", .double(timings.total)),
            ("request", request(line)),
            ("response", response(line)),
            ("cache", .object([])),
            ("timings", timings.value),
        ]
        // Custom fields start with `_` (HAR 1.2): where the entry came from.
        var courier: [(String, JSONWriter.Value)] = [
            ("run", .string(line.run)), ("job", .string(line.job)),
        ]
        if let task = line.task { courier.append(("task", .string(task))) }
        if let attempt = line.attempt { courier.append(("attempt", .int(attempt))) }
        if let page = line.page { courier.append(("page", .int(page))) }
        if let outcome = line.outcome { courier.append(("outcome", .string(outcome))) }
        if let kind = line.errorKind {
            courier.append(
                (
                    "error",
                    .object([
                        ("kind", .string(kind)), ("message", .string(line.errorMessage ?? "")),
                    ])
                ))
        }
        if let finalURL = line.finalURL { courier.append(("finalURL", .string(finalURL))) }
        if let redirects = line.redirects { courier.append(("redirects", .int(redirects))) }
        fields.append(("_courier", .object(courier)))
        return .object(fields)
    }

    private static func request(_ line: LogLine) -> JSONWriter.Value {
        let url = line.url ?? ""
        var fields: [(String, JSONWriter.Value)] = [
            ("method", .string(line.method ?? "GET")),
            ("url", .string(url)),
            ("httpVersion", .string("")),
            ("cookies", .array([])),
            ("headers", headers(line.requestHeaders)),
            ("queryString", queryString(url)),
            ("headersSize", .int(-1)),
            ("bodySize", .int(line.bytesSent ?? (line.requestBody == nil ? 0 : -1))),
        ]
        if let body = line.requestBody {
            let mimeType =
                line.requestHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? ""
            var postData: [(String, JSONWriter.Value)] = [("mimeType", .string(mimeType))]
            switch body {
            case .text(let text):
                postData.append(("text", .string(text)))
            case .base64(let data):
                postData.append(("text", .string(data.base64EncodedString())))
                postData.append(("_encoding", .string("base64")))
            case .omitted(let bytes, _) where line.requestBodyFile != nil:
                // Sent from a file, never read to be logged: named, for `import --har` to
                // send it again (trial UUU: it read "4 bytes (SHA-256 ), too large").
                let file = line.requestBodyFile ?? ""
                postData.append(("text", .string("")))
                postData.append(("_file", .string(file)))
                postData.append(
                    ("comment", .string("\(bytes) bytes sent from the file \(file), not logged")))
            case .omitted(let bytes, let sha256):
                postData.append(("text", .string("")))
                postData.append(
                    (
                        "comment",
                        .string("\(bytes) bytes (SHA-256 \(sha256)), too large for the log")
                    ))
            case .undecodable(let reason):
                postData.append(("text", .string("")))
                postData.append(("comment", .string("the log cannot give it back: \(reason)")))
            }
            fields.append(("postData", .object(postData)))
        }
        return .object(fields)
    }

    private static func response(_ line: LogLine) -> JSONWriter.Value {
        let headers = line.responseHeaders
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name }?.value
        }
        let received = line.status == nil ? 0 : line.bytesReceived ?? 0
        var content: [(String, JSONWriter.Value)] = [
            ("size", .int(received)),
            ("mimeType", .string(header("content-type") ?? "")),
            ("comment", .string("courier's log does not keep response bodies")),
        ]
        if line.status == nil { content[2] = ("comment", .string("no response")) }
        var fields: [(String, JSONWriter.Value)] = [
            // 0 when no response came (a connection error, a timeout), as browsers write it.
            ("status", .int(line.status ?? 0)),
            ("statusText", .string("")),
            ("httpVersion", .string("")),
            ("cookies", .array([])),
            ("headers", self.headers(headers)),
            ("content", .object(content)),
            ("redirectURL", .string(header("location") ?? "")),
            ("headersSize", .int(-1)),
            ("bodySize", .int(line.status == nil ? -1 : received)),
        ]
        if let kind = line.errorKind, line.status == nil {
            fields.append(("_error", .string("\(kind): \(line.errorMessage ?? "")")))
        }
        return .object(fields)
    }

    private static func headers(_ headers: [(name: String, value: String)]) -> JSONWriter.Value {
        .array(
            headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    /// The URL's query as name/value pairs, percent-decoded (`+` is a space in a query).
    private static func queryString(_ url: String) -> JSONWriter.Value {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else {
            return .array([])
        }
        let fragmentless = query.split(separator: "#", maxSplits: 1).first ?? ""
        return .array(
            fragmentless.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(
                    separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                func decode(_ text: Substring?) -> String {
                    let spaced = (text ?? "").replacingOccurrences(of: "+", with: " ")
                    return spaced.removingPercentEncoding ?? spaced
                }
                return .object([
                    ("name", .string(decode(parts.first))),
                    ("value", .string(decode(parts.count > 1 ? parts[1] : nil))),
                ])
            })
    }

    /// HAR's phases from the log's `timings`, whose values are each measured from the start of
    /// the exchange (docs/log-format.md): `dns` to the end of name resolution, `connect` (TLS
    /// included, as HAR counts it) and `ssl` as the differences, `wait` to the first byte,
    /// `receive` the rest; `blocked` is the wait before the request was sent (the rate limit and
    /// the host's gate; the host's alone in an older log). -1 where the transport did
    /// not measure (URLSession measures only the total, which then is `wait`).
    private struct Timings {
        var blocked = -1.0
        var dns = -1.0
        var connect = -1.0
        var ssl = -1.0
        var wait = 0.0
        var receive = 0.0
        var total = 0.0

        init(_ line: LogLine) {
            let totalMs = max(line.totalMs ?? 0, 0)
            if let waited = line.blockedMs ?? line.throttledMs { blocked = waited }
            var reached = 0.0
            if let value = line.dnsMs {
                dns = value
                reached = value
            }
            if let connected = line.connectMs {
                connect = max((line.tlsMs ?? connected) - reached, 0)
                if let tls = line.tlsMs { ssl = max(tls - connected, 0) }
                reached = max(reached, line.tlsMs ?? connected)
            }
            if let firstByte = line.firstByteMs {
                wait = max(firstByte - reached, 0)
                receive = max(totalMs - max(firstByte, reached), 0)
            } else {
                wait = max(totalMs - reached, 0)
            }
            // HAR's `time` is the sum of the phases (`ssl` is inside `connect`).
            total = [blocked, dns, connect, wait, receive].filter { $0 > 0 }.reduce(0, +)
        }

        var value: JSONWriter.Value {
            .object([
                ("blocked", .double(blocked)), ("dns", .double(dns)), ("connect", .double(connect)),
                ("ssl", .double(ssl)), ("send", .double(0)), ("wait", .double(wait)),
                ("receive", .double(receive)),
            ])
        }
    }
}
