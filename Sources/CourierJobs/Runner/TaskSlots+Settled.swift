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
        let key = FNV1a.taskKey(job: job.name, task: task.id)
        let settled = done ?? (options.history?.done.contains(key) ?? false)
        guard let ledger = recordsLedger, let records = task.records else { return settled }
        if settled {
            ledger.done(records, key: key)
        } else {
            ledger.notRun(
                records, task: task.id, stale: options.history?.stale.contains(key) ?? false)
        }
        return settled
    }
}
