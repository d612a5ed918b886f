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
    static let idsPerGroup = 5

    private(set) var total = 0
    private(set) var ok = 0
    private(set) var failed = 0
    private(set) var skipped = 0
    /// Tasks whose final line was a 304 (a conditional task whose output had not changed).
    private(set) var notModified = 0
    /// Tasks by the number of attempts their final line took; sums to ``total``.
    private(set) var attemptsPerTask: [Int: Int] = [:]
    /// The slowest final attempts, slowest first.
    private(set) var slowest: [TaskResult] = []
    /// Tasks whose final outcome is not ok, in id order.
    private(set) var notOK: [TaskResult] = []
    /// ``notOK`` grouped by outcome, error kind and message, the largest group first.
    private(set) var failureGroups: [FailureGroup] = []
    /// Every task in id order, when asked for (JUnit has a test case each).
    private(set) var all: [TaskResult] = []

    init() {}

    init(finals: some Sequence<LogLine>, keepAll: Bool) {
        var groups: [String: FailureGroup] = [:]
        for line in finals {
            guard let result = Self.result(line) else { continue }
            total += 1
            attemptsPerTask[result.attempts, default: 0] += 1
            if keepAll { all.append(result) }
            if slowest.count < Self.slowestCount
                || (result.totalMs ?? 0) > (slowest.last?.totalMs ?? 0)
            {
                slowest.append(result)
                // Ties by id, so that a report of the same logs is the same report.
                slowest.sort { ($0.totalMs ?? 0, $1.task) > ($1.totalMs ?? 0, $0.task) }
                if slowest.count > Self.slowestCount { slowest.removeLast() }
            }
            switch result.outcome {
            case "ok":
                ok += 1
                if line.notModified { notModified += 1 }
                continue
            case "skipped": skipped += 1
            default: failed += 1
            }
            notOK.append(result)
            let message = result.message ?? result.status.map { "status \($0)" } ?? ""
            let key = "\(result.outcome)\u{0}\(result.errorKind ?? "")\u{0}\(message)"
            var group =
                groups[key]
                ?? FailureGroup(outcome: result.outcome, errorKind: result.errorKind, message: message)
            group.count += 1
            group.first = min(group.first, result.time)
            group.last = max(group.last, result.time)
            group.tasks.append(result.task)
            groups[key] = group
        }
        notOK.sort { $0.task < $1.task }
        all.sort { $0.task < $1.task }
        failureGroups = groups.values.map { group in
            var group = group
            group.tasks = Array(group.tasks.sorted().prefix(Self.idsPerGroup))
            return group
        }.sorted { ($0.count, $1.message) > ($1.count, $0.message) }
    }

    /// A final line as a task's result; `nil` for a line that is no task's.
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
