import Courier
import Foundation

/// `since`: a cursor taken from what a task fetched, kept between runs and offered to the next
/// run as `{since}` (an incremental sync: `?updated_since={since}`).
struct SinceRule: Sendable {
    enum Source: Sendable {
        /// The greatest value at this pointer (`*` for each item) over every page.
        case max(String)
        /// The value of this response header on the task's last page.
        case header(String)
    }

    var source: Source
    /// `{since}` before any run has kept a cursor.
    var start: String
    /// Taken off a kept cursor before it is offered: seconds for a timestamp, units for a
    /// number, so that records written late (clock skew, long transactions) are fetched again.
    var lookback: Double

    /// The `{since}` a run offers when `kept` was kept (or none was).
    func offered(_ kept: String?) -> String {
        guard let kept else { return start }
        guard lookback > 0 else { return kept }
        if let earlier = Self.timestamp(kept, less: lookback) { return earlier }
        if let whole = Int(kept), lookback == lookback.rounded() {
            return String(whole - Int(lookback))
        }
        if let number = Double(kept) { return String(number - lookback) }
        return kept
    }

    /// An RFC 3339 timestamp `seconds` earlier, written as `text` was: the same offset (`Z`
    /// or `-05:00`) and as many fraction digits (cut, so the instant only moves earlier). An
    /// API that compares its timestamps as text (Datasette, SQLite) would otherwise get a
    /// cursor in another form and skip records: `…T10:11:53Z` sorts after `…T05:13:01-05:00`.
    static func timestamp(_ text: String, less seconds: Double) -> String? {
        guard let instant = instant(text) else { return nil }
        let zulu = text.hasSuffix("Z") || text.hasSuffix("z")
        let suffix = zulu ? String(text.suffix(1)) : String(text.suffix(6))
        var offset = 0
        if !zulu {
            let sign = suffix.hasPrefix("-") ? -1 : 1
            let parts = suffix.dropFirst().split(separator: ":").compactMap { Int($0) }
            guard parts.count == 2 else { return nil }
            offset = sign * (parts[0] * 3600 + parts[1] * 60)
        }
        let body = text.dropLast(suffix.count)
        let fraction = body.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init)
        guard let zone = TimeZone(secondsFromGMT: offset) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = instant.date - seconds
        let fields = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: date)
        guard let year = fields.year, let month = fields.month, let day = fields.day,
            let hour = fields.hour, let minute = fields.minute, let second = fields.second
        else { return nil }
        // The date-time separator as written (`T`, `t` or a space).
        let separator = text[text.index(text.startIndex, offsetBy: 10)]
        var result =
            String(format: "%04d-%02d-%02d", year, month, day) + String(separator)
            + String(format: "%02d:%02d:%02d", hour, minute, second)
        if let fraction {
            // A whole lookback leaves the fraction as it was written, digit for digit (a
            // `Double` keeps no microseconds of a date in this century).
            if seconds == seconds.rounded() {
                result += "." + fraction
            } else {
                let whole = date.timeIntervalSince1970.rounded(.down)
                let shown = min(fraction.count, 6)
                let scaled = Int(
                    ((date.timeIntervalSince1970 - whole) * pow(10, Double(shown))).rounded(.down))
                result +=
                    "." + String(format: "%0\(shown)d", scaled)
                    + String(repeating: "0", count: fraction.count - shown)
            }
        }
        return result + suffix
    }

    /// Whether `value` is later than `other`: as numbers when both are, as instants when both
    /// are RFC 3339 timestamps (whatever their offsets), else as text.
    static func isLater(_ value: String, than other: String) -> Bool {
        if let a = Double(value), let b = Double(other) { return a > b }
        if let a = instant(value), let b = instant(other) { return a.date > b.date }
        return value > other
    }

    /// The value a node holds as a cursor: a string's text, a number as written, else `nil`.
    static func value(of node: JSONNode) -> String? {
        switch node.value {
        case .string(let text) where !text.isEmpty: text
        case .number: node.numberSource
        default: nil
        }
    }

    /// An RFC 3339 timestamp's instant, and whether it had fractional seconds.
    static func instant(_ text: String) -> (date: Date, fractional: Bool)? {
        guard text.utf8.count >= 20, text.utf8.count <= 40 else { return nil }
        if let (seconds, fractional) = RFC3339Instant.parse(text) {
            return (Date(timeIntervalSince1970: seconds), fractional)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return (date, true) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { ($0, false) }
    }

}
