import Foundation

/// Times as a report shows them, always in UTC: the logs' times are UTC, and a report read in
/// another time zone must name the same instants as the log lines it came from.
enum ReportTime {
    /// `2026-03-01T10:00:09.005Z`, as in the logs.
    static func rfc3339(_ seconds: Double) -> String {
        let (time, milliseconds) = split(seconds)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", time.year, time.month, time.day,
            time.hour, time.minute, time.second, milliseconds)
    }

    /// `2026-03-01 10:00:09Z`: to the second, for people.
    static func display(_ seconds: Double) -> String {
        let (time, _) = split(seconds)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02dZ", time.year, time.month, time.day, time.hour,
            time.minute, time.second)
    }

    /// `10:00:09`: the time of day alone, beside a full date shown once.
    static func clock(_ seconds: Double) -> String {
        let (time, _) = split(seconds)
        return String(format: "%02d:%02d:%02d", time.hour, time.minute, time.second)
    }

    /// Rounded to the nearest millisecond: a log's `.005` is a binary fraction a hair below
    /// it, and rounding down would show `.004`.
    private static func split(_ seconds: Double) -> (UTCTime, milliseconds: Int) {
        let total = Int((seconds * 1000).rounded())
        let whole = total >= 0 ? total / 1000 : (total - 999) / 1000
        return (UTCTime(secondsSince1970: whole), total - whole * 1000)
    }
}
