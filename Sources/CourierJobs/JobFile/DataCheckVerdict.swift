import Foundation

/// Which of a job's `checks` a run failed, decided from the run's figures alone: a pure value,
/// tested without a run (`DataCheckVerdictTests`).
struct DataCheckVerdict: Sendable, Equatable {
    /// One failed check: its place in the job file (`checks.minRecords`,
    /// `tasks[2].checks.minRecords`…) and what was found, in words.
    struct Failure: Sendable, Equatable {
        var check: String
        var message: String
    }

    var failures: [Failure] = []

    /// What a run did, as the checks read it.
    struct Figures: Sendable {
        /// Records kept by the tasks that ended `ok`, by their entry's place in `tasks`.
        var records: [Int: Int] = [:]
        /// Requests sent, and those retried or that ended their task failed.
        var requests = 0
        var unsuccessful = 0
        /// Every `since` cursor of the job after the run (task id → value).
        var cursors: [String: String] = [:]
    }

    /// The verdict on `figures` for the job's checks and its tasks' (`specs`), at `now`.
    init(job checks: DataChecks, specs: [TaskSpec], figures: Figures, now: Date) {
        let total = figures.records.values.reduce(0, +)
        if let least = checks.minRecords, total < least {
            fail(
                "checks.minRecords",
                "the run kept \(total) record\(total == 1 ? "" : "s"), fewer than \(least)")
        }
        for (index, spec) in specs.enumerated() {
            guard let least = spec.checks.minRecords else { continue }
            let kept = figures.records[index]
            // An entry none of whose tasks ran here (a resume found them done) is not judged.
            guard let kept else { continue }
            if kept < least {
                fail(
                    "\(spec.path).checks.minRecords",
                    "task \(spec.id) kept \(kept) record\(kept == 1 ? "" : "s"), fewer than \(least)"
                )
            }
        }
        if let most = checks.maxErrorRate, figures.requests > 0 {
            let rate = Double(figures.unsuccessful) / Double(figures.requests)
            if rate > most {
                fail(
                    "checks.maxErrorRate",
                    "\(figures.unsuccessful) of \(figures.requests) requests failed or were retried (\(Self.percent(rate))), more than \(Self.percent(most))"
                )
            }
        }
        if let age = checks.maxCursorAge {
            let times = figures.cursors.compactMap { id, value in
                Self.instant(value).map { (id: id, value: value, date: $0) }
            }
            if let newest = times.max(by: { $0.date < $1.date }) {
                let old = now.timeIntervalSince(newest.date)
                if old > age {
                    fail(
                        "checks.maxCursorAge",
                        "the newest cursor, \(newest.value) (task \(newest.id)), is \(DurationText.short(old)) old, more than \(DurationText.short(age))"
                    )
                }
            } else {
                fail(
                    "checks.maxCursorAge",
                    figures.cursors.isEmpty
                        ? "no since task has kept a cursor yet"
                        : "no cursor is a time (RFC 3339, a date, or seconds since 1970): \(figures.cursors.values.sorted().prefix(3).joined(separator: ", "))"
                )
            }
        }
    }

    private mutating func fail(_ check: String, _ message: String) {
        failures.append(Failure(check: check, message: message))
    }

    /// A cursor as a time: an RFC 3339 date-time or a date (`2026-11-27`, UTC), as a window's
    /// bound reads (``WindowRule/instant(_:)``), or seconds since 1970 from 10^9 on
    /// (milliseconds when it has 13 digits or more): a smaller whole number is an id or a
    /// version, whose age means nothing.
    static func instant(_ value: String) -> Date? {
        guard let number = Int64(value) else { return WindowRule.instant(value) }
        guard number >= 1_000_000_000 else { return nil }
        return Date(
            timeIntervalSince1970: number >= 1_000_000_000_000
                ? Double(number) / 1000 : Double(number))
    }

    /// `5 %`, `0.5 %`.
    static func percent(_ share: Double) -> String {
        let value = (share * 1000).rounded() / 10
        return "\(value == value.rounded() ? String(Int(value)) : String(value)) %"
    }
}
