import Courier
import Foundation

/// `window`: a task walked over time windows `[start, end)` one `step` at a time, each window
/// a task of its own with `{windowStart}` and `{windowEnd}` formatted as the API wants. Only
/// whole windows are made: the last ends at or before `end` (by default now, less `lag`).
///
/// A window whose task ended `ok` is kept in the job's cursor file (its task id → the window's
/// end, as a `since` cursor is), and later runs leave it out, so that a window that failed is
/// the only one fetched again. A backfill (`courier run --window START..END`) walks a range of
/// its own and fetches every window in it again.
struct WindowRule: Sendable, Equatable {
    /// How a bound is written into the request.
    enum Format: String, Sendable, CaseIterable {
        /// `2026-01-01T00:00:00Z`.
        case rfc3339
        /// `2026-01-01` (UTC).
        case date
        /// Seconds since 1970.
        case epoch
        /// Milliseconds since 1970.
        case epochMs
    }

    var start: Date
    var step: TimeInterval
    /// `nil`: now, less ``lag``, when the run starts.
    var end: Date?
    var lag: TimeInterval = 0
    var format: Format = .rfc3339

    /// The variables each window's task takes.
    static let startVariable = "windowStart"
    static let endVariable = "windowEnd"

    /// The whole windows from `start` to the end (`now` less `lag` when none is set), as
    /// written: at most `limit` of them.
    func windows(now: Date, limit: Int = 1_000_000) -> [(start: String, end: String)] {
        let last = end ?? now.addingTimeInterval(-lag)
        var found: [(start: String, end: String)] = []
        var from = start
        while found.count < limit {
            let to = from.addingTimeInterval(step)
            guard to <= last else { break }
            found.append((written(from), written(to)))
            from = to
        }
        return found
    }

    /// `date` as ``format`` writes it.
    func written(_ date: Date) -> String {
        switch format {
        case .rfc3339:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        case .date:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            return formatter.string(from: date)
        case .epoch: return String(Int64(date.timeIntervalSince1970.rounded(.down)))
        case .epochMs: return String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
        }
    }

    /// A bound as the job file or the command line writes it: an RFC 3339 date-time, a date
    /// (UTC midnight), or whole seconds since 1970.
    static func instant(_ text: String) -> Date? {
        if let (date, _) = SinceRule.instant(text) { return date }
        if let seconds = Int64(text) { return Date(timeIntervalSince1970: Double(seconds)) }
        guard text.utf8.count == 10 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)
    }

    /// `15m`, `6h`, `1d`, `1h30m` as seconds (``DurationText/seconds(_:)``).
    static func duration(_ text: String) -> TimeInterval? { DurationText.seconds(text) }
}

/// `courier run --window START..END`: a backfill of a past range, for every task with a
/// `window`, whatever its cursor file says.
struct WindowOverride: Sendable, Equatable {
    var start: Date
    var end: Date

    /// `2025-01-01..2025-02-01` (each bound as ``WindowRule/instant(_:)`` reads it).
    init?(_ text: String) {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2, let start = WindowRule.instant(parts[0]),
            let end = WindowRule.instant(parts[1]), start < end
        else { return nil }
        (self.start, self.end) = (start, end)
    }
}
