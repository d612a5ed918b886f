import Foundation

/// Which runs `courier report --last N --since WHEN` keeps: log files chosen by when their
/// run started (their `run.start`), so a job's folder of nightly logs reports last night, or
/// the last week, instead of every run ever.
enum ReportWindow {
    /// The log files, in run order, of the `last` latest nights that started at or after
    /// `since` (seconds since 1970). A file with no readable `run.start` is kept only when
    /// neither is asked. A night is a plain run (the shards of one split together) with the
    /// resumes, replays and `--task` runs after it (``nights(_:)``): `--last 1` is last night
    /// and its repairs (trial UUU: a replay of a log alone, counted as a run, reported no
    /// task; trial WWW: one shard of two, or a resume alone, read as no whole run).
    static func select(_ ordered: [String], last: Int?, since: Double?) -> [String] {
        let kept = ordered.filter { path in
            guard let since else { return true }
            guard let start = LogFiles.firstLine(of: path)?.time else { return false }
            return start >= since
        }
        guard let last else { return kept }
        return nights(kept).suffix(last).flatMap { $0 }
    }

    /// `ordered` (run order) in nights: each plain run, or the shards of one split (each
    /// index once, of one count), followed by the runs that complete earlier ones.
    static func nights(_ ordered: [String]) -> [[String]] {
        var nights: [[String]] = []
        var split: (count: Int, seen: Set<Int>)?
        for path in ordered {
            let first = LogFiles.firstLine(of: path)
            guard let first, !JobHistory.completesEarlier(first) || nights.isEmpty else {
                if nights.isEmpty { nights.append([]) }
                nights[nights.count - 1].append(path)
                continue
            }
            let shard = first.runFields.flatMap { fields in
                fields.shardIndex.flatMap { index in fields.shardCount.map { (index, $0) } }
            }
            if let (index, count) = shard, let current = split, current.count == count,
                !current.seen.contains(index), !nights.isEmpty
            {
                split?.seen.insert(index)
                nights[nights.count - 1].append(path)
                continue
            }
            split = shard.map { (count: $0.1, seen: [$0.0]) }
            nights.append([path])
        }
        return nights
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
