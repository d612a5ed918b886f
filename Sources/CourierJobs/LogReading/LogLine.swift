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
    var errorKind: String?
    var errorMessage: String?
    var outcome: String?
    var totalMs: Double?
    var dnsMs: Double?
    var connectMs: Double?
    var tlsMs: Double?
    var firstByteMs: Double?
    var bytesReceived: Int?
    /// `run.start`: the runs this one replays or resumes.
    var replayOf: [String] = []
    var resumedFrom: [String] = []
    var backend: String?
    /// `run.end`.
    var durationMs: Double?

    /// Reads a line's JSON; `nil` when it is not a log line (no `event`, `run` or `ts`).
    init?(_ node: JSONNode) {
        guard case .object(let members) = node.value else { return nil }
        var fields: [String: JSONNode] = [:]
        for member in members { fields[member.key] = member.node }
        guard let event = fields["event"]?.string, let run = fields["run"]?.string,
            let ts = fields["ts"]?.string, let time = Self.parseTime(ts)
        else { return nil }
        self.event = event
        self.time = time
        self.run = run
        self.job = fields["job"]?.string ?? ""
        task = fields["task"]?.string
        attempt = fields["attempt"]?.number.map { Int($0) }
        method = fields["method"]?.string
        url = fields["url"]?.string
        if case .object(let headers)? = fields["requestHeaders"]?.value {
            requestHeaders = headers.compactMap { member in
                member.node.string.map { (member.key, $0) }
            }
        }
        if case .object(let body)? = fields["requestBody"]?.value {
            let parts = Dictionary(body.map { ($0.key, $0.node) }, uniquingKeysWith: { a, _ in a })
            if let text = parts["text"]?.string {
                requestBody = .text(text)
            } else if let encoded = parts["base64"]?.string, let data = Data(base64Encoded: encoded) {
                requestBody = .base64(data)
            } else if let count = parts["omittedBytes"]?.number {
                requestBody = .omitted(bytes: Int(count), sha256: parts["sha256"]?.string ?? "")
            }
        }
        status = fields["status"]?.number.map { Int($0) }
        if case .object(let error)? = fields["error"]?.value {
            for member in error {
                if member.key == "kind" { errorKind = member.node.string }
                if member.key == "message" { errorMessage = member.node.string }
            }
        }
        outcome = fields["outcome"]?.string
        if case .object(let timings)? = fields["timings"]?.value {
            for member in timings {
                let value = member.node.number
                switch member.key {
                case "totalMs": totalMs = value
                case "dnsMs": dnsMs = value
                case "connectMs": connectMs = value
                case "tlsMs": tlsMs = value
                case "firstByteMs": firstByteMs = value
                default: break
                }
            }
        }
        bytesReceived = fields["bytesReceived"]?.number.map { Int($0) }
        if case .array(let runs)? = fields["replayOf"]?.value {
            replayOf = runs.compactMap(\.string)
        }
        if case .array(let runs)? = fields["resumedFrom"]?.value {
            resumedFrom = runs.compactMap(\.string)
        }
        backend = fields["backend"]?.string
        durationMs = fields["durationMs"]?.number
    }

    /// The body bytes, when the log holds them whole.
    var bodyBytes: Data? {
        switch requestBody {
        case .text(let text): Data(text.utf8)
        case .base64(let data): data
        case .omitted, nil: nil
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

extension JSONNode {
    var string: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    var number: Double? {
        if case .number(let number) = value { return number }
        return nil
    }
}
