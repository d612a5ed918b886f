import Courier
import Foundation

/// `since`: a cursor taken from what a task fetched, kept between runs and offered to the next
/// run as `{since}` (an incremental sync: `?updated_since={since}`).
package struct SinceRule: Sendable {
    package enum Source: Sendable {
        /// The greatest value at this pointer (`*` for each item) over every page.
        case max(String)
        /// The value of this response header on the task's last page.
        case header(String)
    }

    package var source: Source
    /// `{since}` before any run has kept a cursor.
    package var start: String
    /// Taken off a kept cursor before it is offered: seconds for a timestamp, units for a
    /// number, so that records written late (clock skew, long transactions) are fetched again.
    package var lookback: Double

    /// The `{since}` a run offers when `kept` was kept (or none was).
    package func offered(_ kept: String?) -> String {
        guard let kept else { return start }
        guard lookback > 0 else { return kept }
        if let instant = Self.instant(kept) {
            return Self.format(instant.date - lookback, fractional: instant.fractional)
        }
        if let whole = Int(kept), lookback == lookback.rounded() {
            return String(whole - Int(lookback))
        }
        if let number = Double(kept) { return String(number - lookback) }
        return kept
    }

    /// Whether `value` is later than `other`: as numbers when both are, as instants when both
    /// are RFC 3339 timestamps (whatever their offsets), else as text.
    package static func isLater(_ value: String, than other: String) -> Bool {
        if let a = Double(value), let b = Double(other) { return a > b }
        if let a = instant(value), let b = instant(other) { return a.date > b.date }
        return value > other
    }

    /// The value a node holds as a cursor: a string's text, a number as written, else `nil`.
    package static func value(of node: JSONNode) -> String? {
        switch node.value {
        case .string(let text) where !text.isEmpty: text
        case .number: node.numberSource
        default: nil
        }
    }

    /// An RFC 3339 timestamp's instant, and whether it had fractional seconds.
    static func instant(_ text: String) -> (date: Date, fractional: Bool)? {
        guard text.utf8.count >= 20, text.utf8.count <= 40 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return (date, true) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { ($0, false) }
    }

    private static func format(_ date: Date, fractional: Bool) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            fractional ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
