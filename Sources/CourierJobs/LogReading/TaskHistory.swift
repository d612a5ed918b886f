import Foundation

/// What logs say about each task, folded line by line in the order the runs happened: the
/// final outcome per task decides (a task that failed in one run and succeeded in a later
/// replay is done).
///
/// Memory: a 64-bit key per finished-ok task; whole lines only for tasks whose final outcome
/// is not `ok` (or for every task, when `keepAllFinals`), which are the ones a replay sends.
struct TaskHistory {
    /// Keys (``FNV1a/taskKey(job:task:)``) of tasks whose latest line is `ok`.
    private(set) var done: Set<UInt64> = []
    /// The latest line of each task that is not done (or of every task with `keepAllFinals`).
    private(set) var finals: [UInt64: LogLine] = [:]
    /// Run ids in the order their `run.start` was read.
    private(set) var runs: [String] = []
    let keepAllFinals: Bool

    init(keepAllFinals: Bool = false) { self.keepAllFinals = keepAllFinals }

    mutating func add(_ line: LogLine) {
        if line.event == "run.start" {
            if !runs.contains(line.run) { runs.append(line.run) }
            return
        }
        guard line.event == "request" || line.event == "task.skipped", let task = line.task else {
            return
        }
        let key = FNV1a.taskKey(job: line.job, task: task)
        if line.outcome == "ok" {
            done.insert(key)
            if keepAllFinals { finals[key] = line } else { finals[key] = nil }
        } else {
            // `failed`, or `retry` as the last word of a killed run: not done.
            done.remove(key)
            finals[key] = line
        }
    }

    /// Reads `paths` in run order (``LogFiles/ordered(_:)``).
    static func read(
        _ paths: [String], keepAllFinals: Bool = false, warn: @escaping (String) -> Void
    ) -> TaskHistory {
        var history = TaskHistory(keepAllFinals: keepAllFinals)
        for entry in LogReader(paths: LogFiles.ordered(paths), warn: warn) {
            history.add(entry.line)
        }
        return history
    }
}
