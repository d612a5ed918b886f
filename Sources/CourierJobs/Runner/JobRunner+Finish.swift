import Courier
import Foundation

extension JobRunner {
    /// Ends a run in this order: every task's line on file; the conditional state; the
    /// progress line cleared; the records files (after the lines of the tasks they hold); the
    /// `since` cursors (after the records: a records task's cursor moves only once its records
    /// are in the file); pruning; the summary; the end ping (its line in the log); `run.end`;
    /// the metrics file. The signal watcher stays until the end's ping is sent.
    func finish(_ begun: Begun, _ underway: Underway, progress: Progress) async -> RunSummary {
        let recordsFailed = await closeWork(begun, underway, progress: progress)
        var summary = summarize(begun, underway, counts: progress.snapshot)
        summary.recordsFailed = recordsFailed
        if let failure = summary.logFailure {
            console.error("courier: the log is incomplete: \(failure)")
        }
        // Before run.end, so that the ping's line is in the log; bounded by notify.timeout.
        await underway.pings?.ended(
            exitCode: summary.exitCode,
            body: options.summaryLine?(summary) ?? Self.shortSummary(summary, job: job.name),
            log: begun.log)
        begun.signals.stop()
        try? begun.log.runEnd(
            duration: summary.duration, total: summary.total, ok: summary.ok,
            failed: summary.failed, requests: summary.requests, exitCode: summary.exitCode,
            interrupted: summary.interruptedBy != nil, stoppedBy: summary.stopReason,
            alreadyDone: options.resume == nil ? nil : summary.alreadyDone)
        summary.logFailure = summary.logFailure ?? begun.log.failure
        if let metrics = begun.metrics {
            finishMetrics(metrics, summary: summary, started: begun.started)
        }
        return summary
    }

    /// The tasks' lines on file, the timers stopped, the conditional state, records and
    /// `since` cursors written, and pruning done or said skipped; how many records files
    /// failed.
    private func closeWork(_ begun: Begun, _ underway: Underway, progress: Progress) async
        -> Int
    {
        underway.reporter.finish()
        // Every task's line on file before the state, records and cursors that follow them.
        begun.log.flush()
        underway.deadline?.cancel()
        if case .selection(let selection, _) = source, begun.stop.cause == nil,
            !underway.vanished.withLock({ $0 })
        {
            // Selected tasks the job no longer builds never ran: the replay refuses them
            // (``ReplaySelection/unmatched``); they are no task of this run. Patterns were
            // never counted before running: only the ids are taken off.
            progress.tasksFound(-selection.unmatchedCount)
        }
        underway.watchdog.cancel()
        underway.flusher?.cancel()
        do {
            try underway.state?.flush()
        } catch {
            console.error("courier: cannot keep the conditional state: \(error)")
        }
        underway.ticker?.cancel()
        if showsProgress { console.overwriteLine() }
        var recordsFailed = 0
        if let ledger = recordsLedger, source.savesOutputs {
            if let signal = begun.signals.signal {
                ledger.interrupted(
                    "the run was interrupted (signal \(signal)) before every task ran")
            } else if underway.vanished.withLock({ $0 }) {
                ledger.interrupted("the run stopped when its log was deleted")
            }
            recordsFailed = await commitRecords(ledger, run: begun.runID)
        }
        // After the records: a records task's cursor moves only once its records are in the file.
        do {
            try since?.flush()
        } catch {
            console.error("courier: cannot keep the since cursors: \(error)")
        }
        underway.metricsTicker?.cancel()
        // The signal watcher stays until the end's ping is sent: a signal now changes
        // nothing, and the ping has its own bound.
        let counts = progress.snapshot
        let total = counts.total
        // Only a run that saw the whole listing and every child decides what is gone.
        if let pruning, case .job = source, options.resume == nil, options.shard == nil,
            begun.stop.cause == nil, !underway.vanished.withLock({ $0 }),
            counts.failed == 0, counts.done == total
        {
            pruning.prune(job: job, run: begun.runID, console: console)
        } else if pruning != nil {
            console.error(
                "courier: prune: skipped: only a whole run of the job with every task ok decides which items are gone"
            )
        }
        return recordsFailed
    }

    /// The run's figures as its summary: how it ended and why.
    private func summarize(_ begun: Begun, _ underway: Underway, counts: Progress.Counts)
        -> RunSummary
    {
        let total = counts.total
        // A deadline that cut nothing (every task had started and ended within the grace
        // period) does not make the run an interrupted one: cron and healthchecks see 0 or 1.
        var cause = begun.stop.cause
        if case .deadline = cause, counts.done == total, !begun.stop.cutInFlight { cause = nil }
        // Tasks an interrupted run never started are neither ok nor failed.
        let notRun = cause == nil ? total - counts.done : 0
        var summary = RunSummary(
            total: total, ok: counts.ok, failed: counts.failed + notRun,
            alreadyDone: counts.alreadyDone, requests: counts.requests,
            notModified: counts.notModified,
            duration: Date().timeIntervalSince(begun.started), interruptedBy: cause?.exitSignal,
            logURL: begun.logURL, logFailure: begun.log.failure)
        if case .deadline(let seconds) = cause { summary.deadlineReached = seconds }
        if underway.vanished.withLock({ $0 }) {
            summary.logFailure =
                "\(begun.logURL.relativePath) was deleted (or its folder) during the run; the run stopped"
            summary.logVanished = true
        }
        return summary
    }
}
