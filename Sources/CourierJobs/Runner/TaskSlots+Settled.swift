import Foundation

/// What the run does for a task it does not send: its window kept, its records' file told.
extension JobRunner {
    /// A window an earlier run did, which the cursor file does not hold yet (its records
    /// waited for this resume): held until its records are in their file, as a window this
    /// run fetched is, else kept at once.
    func keepWindow(of task: ExpandedTask) {
        guard let end = task.windowEnd else { return }
        if task.records != nil {
            since?.hold(end, for: task.id)
        } else {
            since?.record(end, for: task.id)
        }
    }

    /// Tells the ledger of a records task this run does not send for its records: done by the
    /// history (`done`), or, for a replay that did not select it (`nil`), done if the logs it
    /// replays say so. Returns whether it is done: a replay keeps a done window as a resume
    /// does (trial LL: the next night fetched a repaired night's windows again).
    @discardableResult
    func settledRecords(of task: ExpandedTask, done: Bool?) -> Bool {
        // A key is a hash of the id: made only when a history or a ledger asks for it.
        var key: UInt64 { FNV1a.taskKey(job: job.name, task: task.id) }
        let settled = done ?? (options.history.map { $0.done.contains(key) } ?? false)
        if done == true, task.records != nil { countKept(of: task, key: key) }
        guard let ledger = recordsLedger, let records = task.records else { return settled }
        if settled {
            ledger.done(records, key: key)
        } else {
            ledger.notRun(
                records, task: task.id, stale: options.history?.stale.contains(key) ?? false)
        }
        return settled
    }

    /// Adds the records a done task's earlier run kept (its `ok` line's `recordsKept`) to the
    /// run's counts, so that a resume judges `minRecords` over the whole night (trial NNN: a
    /// night with a failed task never judged it, its resume did not either, and 0 records
    /// exited 0). A done task whose line does not say (an older courier's) leaves the run
    /// unable to judge it (``uncountedRecords``).
    func countKept(of task: ExpandedTask, key: UInt64) {
        if let kept = options.history?.recordsKept[key], let index = task.specIndex {
            recordCounts.withLock { $0[index, default: 0] += kept }
        } else {
            uncountedRecords.withLock { $0 = true }
        }
    }

    /// A task a replay did not choose whose records, kept by the run it replays, are older
    /// than their file (``RunHistory/stale``): not done any more, and its line says so, so
    /// that the history, the summaries and `report` count it until a resume fetches it again
    /// (trial QQ: every one said "done" while the file lacked its records).
    func staleRecords(of task: ExpandedTask, log: RunLog) {
        guard let history = options.history, !history.stale.isEmpty, let records = task.records,
            history.stale.contains(FNV1a.taskKey(job: job.name, task: task.id))
        else { return }
        let resume = Self.resumeCommand(job, logs: history.logs)
        try? log.skipped(
            task: task.id,
            reason:
                "the records it kept are older than \(records.path), which a later run wrote: not taken; `\(resume)` fetches it again",
            kind: LogErrorKind.records)
    }

    /// `courier run JOB --resume LOG… [--base-url URL]`, every path absolute: pasted anywhere,
    /// it resumes these logs (after a night, `--resume` alone would complete the night) on the
    /// same server.
    static func resumeCommand(_ job: Job, logs: [String]) -> String {
        let file = job.file == JobDecoder.standardInput ? "-" : job.file.standardizedFileURL.path
        let paths = logs.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let base = job.baseURLOverride.map { ["--base-url", $0] } ?? []
        return (["courier", "run", file, "--resume"] + paths + base)
            .map(ShellWord.quoted).joined(separator: " ")
    }
}
