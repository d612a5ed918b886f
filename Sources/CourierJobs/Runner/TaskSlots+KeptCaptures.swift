import Courier

/// What an earlier run kept of a done task's captures, handed to the feed in its stead.
extension JobRunner {
    /// Hands the values an earlier run kept for `task` (done, and capturing) to the feed, when
    /// the run that did it kept them (``KeptCaptures``); whether it did. A task the history
    /// does not count as done, or whose values are not kept, is sent as before.
    func reuseKeptCaptures(of task: ExpandedTask, run: String, _ slots: TaskSlots)
        -> Bool
    {
        reuseKeptCaptures(id: task.id, rules: task.captures(in: job), run: run, slots)
    }

    /// Hands on what an earlier run kept of `task` (done, and capturing), when it kept
    /// anything: a task settled as done whose values a fan-out still takes.
    func handOnKept(of task: ExpandedTask, _ slots: TaskSlots) {
        guard let run = slots.selection.okRuns[FNV1a.taskKey(job: job.name, task: task.id)]
        else { return }
        _ = reuseKeptCaptures(of: task, run: run, slots)
    }

    func reuseKeptCaptures(
        id: String, rules: [CaptureRule], run: String, _ slots: TaskSlots
    ) -> Bool {
        guard let feed = slots.cursor.feed, !rules.isEmpty,
            let kept = KeptCaptures.load(job: job, task: id, run: run)
        else { return false }
        // Every kept capture must still be one of the task's before any value is handed on:
        // a task whose captures changed since is sent again, and its values come once.
        let matched = kept.compactMap { kept in
            rules.first { $0.name == kept.capture }.map { ($0, kept.values) }
        }
        guard matched.count == kept.count else { return false }
        for (rule, values) in matched {
            do {
                try feed.capture(values, for: rule)
            } catch {
                // The values could not be held (a full disk under the spill file): the task
                // is sent again, and a value it hands on twice fans out once.
                return false
            }
        }
        keptFrom.withLock { $0[id] = run }
        return true
    }
}
