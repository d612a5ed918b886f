/// One row per run of a report: when it started, what kind of run it was, and how it ended,
/// from its `run.start` and `run.end`, so that a run that never finished is seen as such.
struct RunTable {
    /// How a run ended.
    enum State: String {
        /// `run.end` says it ran to the end.
        case finished
        /// `run.end` says SIGINT/SIGTERM stopped it: tasks never started are not counted.
        case interrupted
        /// No `run.end`: the process died (SIGKILL, power loss) and the log stops where it did.
        case killed
    }

    struct Row {
        var run: String
        var file: String
        var start: Double
        /// `run`, `resume`, `replay` or `task` (`run --task`: chosen tasks of the job).
        var kind: String
        var shardIndex: Int?
        var shardCount: Int?
        /// What `run.start` planned (`nil` in logs written before it said).
        var plannedTasks: Int?
        /// The job file the run read: its absolute path, or (in logs before `jobPath`) as the
        /// command line gave it.
        var jobFile: String?
        var fanOut: Bool
        /// `run.end`'s fields and time, once read.
        var end: LogLine.RunFields?
        var endTime: Double?
        /// Tasks with a final line in this run (a renewed login's second line not counted).
        var recordedTasks = 0
        /// Of them, the tasks skipped (`run.end` counts them among the failed).
        var skippedTasks = 0
        /// The time of the run's last line, which is as far as a killed run is known to have got.
        var lastTime: Double
        /// What the run goes on from: a replay's `replayOf` runs, and the file names of the
        /// logs a resume read (`resumedFrom`).
        var goesOnFrom: Set<String> = []
        /// A resume's first log read (`resumedFrom`): the run whose line it goes on with.
        var resumedRoot: String? = nil
        /// A backfill's range (`run --window`), as its `run.start` logged it.
        var window: String? = nil
        /// ``kind`` as the tables show it: a backfill (a plain run with a range) says so.
        var shownKind: String { kind == "run" && window != nil ? "backfill" : kind }
        /// `run --base-url`, as its `run.start` logged it.
        var baseURL: String? = nil

        var state: State {
            guard let end else { return .killed }
            return end.interrupted ? .interrupted : .finished
        }

        /// `0/2`, or `nil` for a run that was not sharded.
        var shard: String? {
            guard let shardIndex, let shardCount else { return nil }
            return "\(shardIndex)/\(shardCount)"
        }

        /// Seconds the run took (from `run.end`), or, for a killed run, to its last line.
        var seconds: Double { end?.durationMs.map { $0 / 1000 } ?? max(0, lastTime - start) }

        /// `killed: 8,060 of 25,001 tasks recorded`, worded for what the log can tell: a
        /// shard's log knows only the whole job's count, and a job that fans out over
        /// captured values has more tasks than validation counted.
        var killedSummary: String {
            let recorded =
                ReportText.grouped(recordedTasks) + (recordedTasks == 1 ? " task" : " tasks")
            guard let planned = plannedTasks.map(ReportText.grouped) else {
                return
                    "killed: \(recorded) recorded (the log does not say how many were planned)"
            }
            if fanOut {
                // Validation counted the tasks before the fan-out; the rest were still being
                // found when the log stops, so no "of N" can be told.
                let part = shard.map { ", shard \($0)" } ?? ""
                return
                    "killed: \(recorded) recorded\(part) (the job fans out over captured values: \(planned) known before it, the rest found as it ran)"
            }
            let atLeast = ""
            if let shard {
                return
                    "killed: \(recorded) recorded (shard \(shard) of a job of \(atLeast)\(planned) tasks)"
            }
            let resumed =
                kind == "resume"
                ? " (a resume: the \(planned) count the tasks earlier runs did, which it does not record again)"
                : ""
            return
                "killed: \(ReportText.grouped(recordedTasks)) of \(atLeast)\(planned) tasks recorded\(resumed)"
        }
    }

    private(set) var rows: [Row] = []
    private var index: [String: Int] = [:]
    /// The row of the last line's run: lines come a run at a time, so this saves a lookup.
    private var current: (run: String, row: Int)?

    var killed: [Row] { rows.filter { $0.state == .killed } }

    /// Runs that left tasks unreached: the killed ones, and those a signal or a deadline
    /// stopped before some task started (`run.end` counts fewer tasks ok or failed than the
    /// run had, or says a fan-out had not listed all its tasks), whose unreached tasks no
    /// line names.
    var unfinished: [Row] {
        rows.filter { row in
            guard let end = row.end else { return true }
            guard end.interrupted else { return false }
            if end.tasksUnlisted { return true }
            guard let total = end.total else { return false }
            return total - (end.ok ?? 0) - (end.failed ?? 0) > 0
        }
    }

    /// The first resume or replay that started after `row` and went on from it: a resume
    /// that read its log, a replay of its requests. A shard's resume goes on from its own
    /// shard's runs only (a trial saw shard 0's resume credited with shard 1's killed run, and
    /// another a replay of an earlier night's run credited with the killed one).
    func continuation(of row: Row) -> Row? {
        let file = Self.fileName(row.file)
        return rows.first {
            $0.start > row.start && ($0.kind == "resume" || $0.kind == "replay")
                && ($0.goesOnFrom.contains(row.run) || $0.goesOnFrom.contains(file))
                && ($0.shardCount == nil
                    || ($0.shardIndex == row.shardIndex && $0.shardCount == row.shardCount))
        }
    }

    /// A log path's file name: a resume names the logs it read by absolute path, a report
    /// by the path it was given.
    private static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Seconds in which some run of the report was running: the runs' spans, overlaps
    /// (shards) counted once and the idle time between runs not at all.
    var busySeconds: Double {
        let spans = rows.map { ($0.start, $0.start + $0.seconds) }.sorted { $0.0 < $1.0 }
        var total = 0.0
        var current: (Double, Double)?
        for span in spans {
            if let open = current, span.0 <= open.1 {
                current = (open.0, max(open.1, span.1))
            } else {
                if let open = current { total += open.1 - open.0 }
                current = span
            }
        }
        if let open = current { total += open.1 - open.0 }
        return total
    }

    mutating func add(_ line: LogLine, file: String) {
        if line.event == "run.start" {
            guard index[line.run] == nil else { return }
            let fields = line.runFields ?? LogLine.RunFields()
            index[line.run] = rows.count
            rows.append(
                Row(
                    run: line.run, file: file, start: line.time,
                    kind: !line.replayOf.isEmpty
                        ? "replay"
                        : !line.resumedFrom.isEmpty
                            ? "resume" : line.replayFrom != nil ? "task" : "run",
                    shardIndex: fields.shardIndex, shardCount: fields.shardCount,
                    plannedTasks: fields.plannedTasks, jobFile: fields.jobPath ?? fields.jobFile,
                    fanOut: fields.fanOut,
                    lastTime: line.time,
                    goesOnFrom: Set(line.replayOf + line.resumedFrom.map(Self.fileName)),
                    resumedRoot: line.resumedFrom.first, window: fields.window,
                    baseURL: fields.baseURL))
            return
        }
        let row: Int
        if let current, current.run == line.run {
            row = current.row
        } else {
            // A run whose run.start was not read (a file cut at its head) has no row.
            guard let found = index[line.run] else { return }
            row = found
            current = (line.run, found)
        }
        rows[row].lastTime = max(rows[row].lastTime, line.time)
        switch line.event {
        case "run.end":
            rows[row].end = line.runFields
            rows[row].endTime = line.time
        case "request", "task.skipped":
            if !line.renewal, let outcome = line.outcome,
                outcome == "ok" || outcome == "failed" || outcome == "skipped"
            {
                rows[row].recordedTasks += 1
                // A write held back is a failed task, as the report's tasks count it.
                if outcome == "skipped", line.errorKind != LogErrorKind.writeHeld {
                    rows[row].skippedTasks += 1
                }
            }
        default:
            break
        }
    }
}
