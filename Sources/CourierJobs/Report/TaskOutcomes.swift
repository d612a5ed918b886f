import Foundation

/// The per-task figures of a report: one final outcome per task, the task's last final line
/// across every log read (``TaskHistory``'s fold), however many runs sent it.
struct TaskOutcomes {
    /// A task's final word.
    struct TaskResult {
        var task: String
        /// `ok`, `failed` or `skipped`.
        var outcome: String
        var attempts: Int
        var status: Int?
        var errorKind: String?
        var message: String?
        var totalMs: Double?
        /// When its final line was written.
        var time: Double
    }

    /// Tasks whose final outcome is not ok, told apart by what went wrong: one row however
    /// many tasks share it.
    struct FailureGroup {
        var outcome: String
        var errorKind: String?
        var message: String
        var count = 0
        var first = Double.infinity
        var last = -Double.infinity
        /// The first few ids, in id order.
        var tasks: [String] = []
    }

    static let slowestCount = 10
    /// Candidates kept for ``slowest``: more than shown, because a task's candidate leaves
    /// when a later run gives it a new final line, and what it had pushed out is gone.
    static let slowCandidates = 100
    static let idsPerGroup = 5

    private(set) var total = 0
    private(set) var ok = 0
    private(set) var failed = 0
    private(set) var skipped = 0
    /// Tasks whose final line was a 304 (a conditional task whose output had not changed).
    private(set) var notModified = 0
    /// Tasks that sent requests, by the number of attempts their final line took; sums to
    /// ``total`` less ``skipped``.
    private(set) var attemptsPerTask: [Int: Int] = [:]
    /// The slowest final attempts, slowest first.
    private(set) var slowest: [TaskResult] = []
    /// Tasks whose final outcome is not ok, in id order.
    private(set) var notOK: [TaskResult] = []
    /// ``notOK`` grouped by outcome, error kind and message, the largest group first.
    private(set) var failureGroups: [FailureGroup] = []
    /// Every task in id order, when the history keeps every final line (for JUnit).
    private(set) var all: [TaskResult] = []

    /// What the latest ok line of a task adds to the per-task figures (attempts × 2, plus 1
    /// for a 304), for tasks where that is not ``plainOK``: the history keeps no line for a
    /// task that is done, so as not to hold a line per task.
    private var okLines: [UInt64: UInt16] = [:]
    /// One attempt, not a 304: what a task missing from ``okLines`` had.
    private static let plainOK: UInt16 = 1 << 1
    /// Slowest final attempts so far, by history key (at most ``slowCandidates``).
    private var candidates: [UInt64: TaskResult] = [:]
    /// The fastest candidate's time, the bar a new one must pass once the pool is full.
    private var candidateBar = 0.0

    /// Notes a `request` or `task.skipped` line of the task with history key `key`.
    mutating func add(_ line: LogLine, key: UInt64) {
        // The task's earlier final line, if it was a candidate, is not its last word now.
        if !candidates.isEmpty { candidates[key] = nil }
        let ok = line.outcome == "ok"
        guard ok || line.outcome == "failed" else { return }
        if ok {
            // Only what differs from one attempt without a 304 is kept: most tasks cost nothing.
            let figures = UInt16(min(line.attempt ?? 1, 0x7FFF)) << 1 | (line.notModified ? 1 : 0)
            if figures != Self.plainOK {
                okLines[key] = figures
            } else if !okLines.isEmpty {
                okLines[key] = nil
            }
        }
        // An attempt that never went out took no time to answer (a cut retry's line says
        // again one that did, and stays).
        guard line.wentOut || line.cutRetry else { return }
        let milliseconds = line.totalMs ?? 0
        if candidates.count >= Self.slowCandidates {
            guard milliseconds > candidateBar,
                let fastest = candidates.min(by: {
                    ($0.value.totalMs ?? 0) < ($1.value.totalMs ?? 0)
                })
            else { return }
            candidates[fastest.key] = nil
        }
        guard let result = Self.result(line) else { return }
        candidates[key] = result
        if candidates.count >= Self.slowCandidates {
            candidateBar = candidates.values.lazy.map { $0.totalMs ?? 0 }.min() ?? 0
        }
    }

    /// The figures, once every line is read: one outcome per task, as `history` decided.
    mutating func finish(_ history: TaskHistory) {
        var groups: [String: FailureGroup] = [:]
        for line in history.finals.values {
            guard let result = Self.result(line) else { continue }
            if history.keepAllFinals { all.append(result) }
            // Done tasks are counted below, from `done`, kept lines or not.
            guard result.outcome != "ok" else { continue }
            if result.attempts > 0 { attemptsPerTask[result.attempts, default: 0] += 1 }
            if result.outcome == "skipped" { skipped += 1 } else { failed += 1 }
            notOK.append(result)
            let message = result.message ?? result.status.map { "status \($0)" } ?? ""
            let key = "\(result.outcome)\u{0}\(result.errorKind ?? "")\u{0}\(message)"
            var group =
                groups[key]
                ?? FailureGroup(
                    outcome: result.outcome, errorKind: result.errorKind, message: message)
            group.count += 1
            group.first = min(group.first, result.time)
            group.last = max(group.last, result.time)
            group.tasks.append(result.task)
            groups[key] = group
        }
        for key in history.done {
            let figures = okLines[key] ?? Self.plainOK
            attemptsPerTask[Int(figures >> 1), default: 0] += 1
            if figures & 1 == 1 { notModified += 1 }
        }
        ok = history.done.count
        total = ok + failed + skipped
        notOK.sort { $0.task < $1.task }
        all.sort { $0.task < $1.task }
        failureGroups = groups.values.map { group in
            var group = group
            // Numbers in ids in numeric order: t7 before t257.
            group.tasks = Array(
                group.tasks.sorted { $0.compare($1, options: .numeric) == .orderedAscending }
                    .prefix(Self.idsPerGroup))
            return group
        }.sorted { ($0.count, $1.message) > ($1.count, $0.message) }
        // Ties by id, so that a report of the same logs is the same report.
        slowest = Array(
            candidates.values.sorted {
                ($0.totalMs ?? 0, $1.task) > ($1.totalMs ?? 0, $0.task)
            }.prefix(Self.slowestCount))
        okLines = [:]
        candidates = [:]
    }

    /// A final line as a task's result; `nil` for a line that is not a task's final line.
    static func result(_ line: LogLine) -> TaskResult? {
        guard let task = line.task, let outcome = line.outcome else { return nil }
        var result = TaskResult(
            task: task, outcome: outcome, attempts: line.attempt ?? 1, status: line.status,
            errorKind: line.errorKind, message: line.errorMessage, totalMs: line.totalMs,
            time: line.time)
        switch outcome {
        case "ok", "failed":
            break
        case "skipped":
            result.attempts = 0
            // A write held back is a task not done that its run counted failed (exit 1), not
            // one skipped for want of a capture (trial R: the report and the run disagreed).
            if line.errorKind == LogErrorKind.writeHeld { result.outcome = "failed" }
        default:
            // `retry` or `page` as a task's last word: its run died before the task ended, so
            // it is not done (``TaskHistory``, and `--resume` sends it again).
            result.outcome = "failed"
            result.errorKind = line.errorKind ?? "killed"
            result.message = "its run ended before the task did (last line: \(outcome))"
        }
        return result
    }
}
