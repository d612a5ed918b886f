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

    /// The most windows one task may have: more is a mistake of `start` or `step` (one
    /// second over eleven days), refused before any is made.
    static let limit = 1_000_000

    /// How many whole windows there are from `start` to the end (`now` less `lag` when none
    /// is set): counted, not made, so that a billion is told at once.
    func count(now: Date) -> Int {
        let span = (end ?? now.addingTimeInterval(-lag)).timeIntervalSince(start)
        guard span >= step else { return 0 }
        let whole = (span / step).rounded(.down)
        guard whole < Double(Int.max / 2) else { return Int.max / 2 }
        // The division may fall a hair either side of a whole number of steps.
        var count = Int(whole)
        while bound(count + 1) <= end(now: now) { count += 1 }
        while count > 0, bound(count) > end(now: now) { count -= 1 }
        return count
    }

    /// The whole windows from `start` to the end (`now` less `lag` when none is set), as
    /// written: at most `limit` of them. Each bound is `start` plus a whole number of steps,
    /// not steps added one by one, which would drift.
    func windows(now: Date, limit: Int = WindowRule.limit) -> [(start: String, end: String)] {
        let count = min(count(now: now), limit)
        var found: [(start: String, end: String)] = []
        found.reserveCapacity(count)
        var from = written(start)
        for index in 0..<count {
            let to = written(bound(index + 1))
            found.append((from, to))
            from = to
        }
        return found
    }

    /// The end of the windows: ``end``, or `now` less ``lag``.
    private func end(now: Date) -> Date { end ?? now.addingTimeInterval(-lag) }

    /// The bound `steps` steps after `start`.
    private func bound(_ steps: Int) -> Date { start.addingTimeInterval(Double(steps) * step) }

    /// `date` as ``format`` writes it (in UTC, whole seconds; worked out digit by digit: a
    /// date formatter made for each bound cost 130 µs a window, trial V).
    func written(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        switch format {
        case .rfc3339, .date:
            let time = UTCTime(secondsSince1970: Int(seconds.rounded(.down)))
            let two = { (value: Int) in String(value).leftPadded(to: 2) }
            let day = "\(String(time.year).leftPadded(to: 4))-\(two(time.month))-\(two(time.day))"
            guard format == .rfc3339 else { return day }
            return "\(day)T\(two(time.hour)):\(two(time.minute)):\(two(time.second))Z"
        case .epoch: return String(Int64(seconds.rounded(.down)))
        case .epochMs: return String(Int64((seconds * 1000).rounded(.down)))
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
    /// As the command line gave it: `run.start` logs it as `window`, and a `--resume` of the
    /// run reads it back to complete the same backfill.
    var text: String

    /// `2025-01-01..2025-02-01` (each bound as ``WindowRule/instant(_:)`` reads it).
    init?(_ text: String) {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2, let start = WindowRule.instant(parts[0]),
            let end = WindowRule.instant(parts[1]), start < end
        else { return nil }
        (self.start, self.end, self.text) = (start, end, text)
    }

    /// The same range, however each was written.
    func covers(theSameRangeAs other: WindowOverride) -> Bool {
        start == other.start && end == other.end
    }
}
