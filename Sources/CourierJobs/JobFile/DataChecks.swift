import Courier
import Foundation

/// `checks`: what the data a run fetched must show for the run to succeed, beside every task
/// ending `ok`. A sync that "succeeds" with no rows, through a storm of retries, or with a
/// cursor that stopped moving is the quiet failure of scheduled syncs: these turn it into an
/// exit code (4), the failure ping and a metric.
///
/// The job's checks look at the whole run; a task's (`minRecords` only) at its entry's tasks.
struct DataChecks: Sendable, Equatable {
    /// The fewest records the run (or the entry's tasks) may have kept.
    var minRecords: Int?
    /// The largest share of requests that may have failed: attempts retried, or that ended
    /// their task failed (0–1).
    var maxErrorRate: Double?
    /// The oldest, in seconds before the run's end, that the newest `since` cursor of the job
    /// may be: a cursor that stops moving means the source stopped changing, or the sync
    /// stopped seeing it.
    var maxCursorAge: TimeInterval?

    var isEmpty: Bool { minRecords == nil && maxErrorRate == nil && maxCursorAge == nil }
}

extension JobDecoder {
    /// `checks`, the job's (`job: true`: every key) or a task's (`minRecords`).
    static func decodeChecks(
        _ node: JSONNode, path: String, job: Bool, context: DecodingContext
    ) -> DataChecks? {
        guard
            var reader = NodeReader(
                node, path: path, keys: job ? JobKeys.jobChecks : JobKeys.taskChecks,
                context: context)
        else { return nil }
        var checks = DataChecks()
        checks.minRecords = reader.integer(
            "minRecords", range: 1...Int(Int32.max), what: "a whole number of records from 1")
        if job {
            checks.maxErrorRate = reader.number(
                "maxErrorRate", range: 0...1, what: "a share of requests from 0 to 1 (0.05 is 5 %)")
            checks.maxCursorAge = reader.number(
                "maxCursorAge", range: 1...31_622_400, what: "seconds from 1 to a year")
        }
        reader.rejectUnknownKeys()
        if checks.isEmpty, case .object(let members) = node.value, members.isEmpty {
            context.error(path, "names no check; leave it out, or give one", at: node)
        }
        return checks
    }

    /// The job's `checks` (none when `node` is `nil`), refused when they could never pass.
    static func decodeJobChecks(_ node: JSONNode?, tasks: [TaskSpec], context: DecodingContext)
        -> DataChecks
    {
        guard let node else { return DataChecks() }
        let checks = decodeChecks(node, path: "checks", job: true, context: context) ?? DataChecks()
        checkChecks(checks, tasks: tasks, at: node, context: context)
        return checks
    }

    /// Checks that could never pass, refused when the file is read: records counted where no
    /// task keeps any, a cursor's age where no task keeps a cursor. Not said of a task whose
    /// `records` or `since` is there but wrong: its own error says what is (trial V: a bad
    /// `write` also read "no task has records").
    static func checkChecks(
        _ checks: DataChecks, tasks: [TaskSpec], at node: JSONNode?, context: DecodingContext
    ) {
        let wrong = { (key: String) in
            context.errors.contains { $0.path.hasPrefix("tasks[") && $0.path.contains(key) }
        }
        if checks.minRecords != nil, !tasks.contains(where: { $0.records != nil }),
            !wrong(".records")
        {
            context.error(
                "checks.minRecords", "no task has \"records\": there are no records to count",
                at: node)
        }
        if checks.maxCursorAge != nil, !tasks.contains(where: { $0.since != nil }),
            !wrong(".since")
        {
            context.error(
                "checks.maxCursorAge", "no task has \"since\": there is no cursor to check",
                at: node)
        }
    }
}
