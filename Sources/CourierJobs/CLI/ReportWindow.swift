import Foundation

/// Which runs `courier report --last N --since WHEN` keeps: log files chosen by when their
/// run started (their `run.start`), so a job's folder of nightly logs reports last night, or
/// the last week, instead of every run ever.
enum ReportWindow {
    /// The log files, in run order, whose run is among the `last` latest and started at or
    /// after `since` (seconds since 1970). A file with no readable `run.start` is kept only
    /// when neither is asked. A replay of logs alone is not counted among the `last`: it
    /// decides nothing in the job's history, and alone it reported no task (trial UUU); it is
    /// kept when it comes after the runs kept.
    static func select(_ ordered: [String], last: Int?, since: Double?) -> [String] {
        let kept = ordered.filter { path in
            guard let since else { return true }
            guard let start = LogFiles.firstLine(of: path)?.time else { return false }
            return start >= since
        }
        guard let last else { return kept }
        var counted = 0
        for index in kept.indices.reversed() {
            if LogFiles.firstLine(of: kept[index])?.replayFrom != "log" { counted += 1 }
            if counted == last { return Array(kept[index...]) }
        }
        return kept
    }

    /// `--since`'s value as seconds since 1970: `36h`, `7d`, `30m` back from `now`, or a UTC
    /// date (`2026-11-20`) or time (`2026-11-20T02:00Z`, seconds optional); `nil` when it is
    /// neither.
    static func start(_ text: String, now: Double) -> Double? {
        if text.last?.isLetter == true, let seconds = DurationText.seconds(text), seconds > 0 {
            return now - seconds
        }
        let formats = ["yyyy-MM-dd", "yyyy-MM-dd'T'HH:mmX", "yyyy-MM-dd'T'HH:mm:ssX"]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date.timeIntervalSince1970.rounded() }
        }
        return nil
    }
}
