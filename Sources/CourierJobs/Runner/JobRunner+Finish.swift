import Courier
import Foundation

extension JobRunner {
    /// The steps that end a run. Their order is ``finishOrder``, written once; each runs
    /// after what it depends on (`FinishOrderTests` checks those rules on the list).
    enum FinishStep: CaseIterable, Sendable {
        /// The failure reporter's last lines.
        case failuresReported
        /// Every task's line on file: before the state, records and cursors that follow them.
        case linesOnFile
        /// The deadline, the log's watchdog and the state's flush timer stopped.
        case timersStopped
        /// A replay's or `--task` run's chosen tasks the job no longer builds: no task of it.
        case unbuiltSelectionUncounted
        /// The conditional state written.
        case conditionalState
        /// The progress line's timer stopped and the line cleared.
        case progressLine
        /// The records files put together from the tasks' parts.
        case records
        /// The `since` cursors written: a records task's moves only once its records are in.
        case cursors
        /// The metrics timer stopped (the file is written once more at the end).
        case metricsTimer
        /// Pruning, or why it was skipped.
        case pruning
        /// The run's figures as its summary (with, for a repair, what the job's history still
        /// lacks).
        case summary
        /// The job's `checks` judged on the run's figures; a failed one sets the exit code.
        case dataChecks
        /// The end ping, its line in the log (bounded by `notify.timeout`).
        case endPing
        /// The signal watcher stopped: it stays until the end ping is sent.
        case signalWatcher
        /// `run.end` written.
        case runEnd
        /// The metrics file written and pushed with the run's figures.
        case metricsFile
    }

    /// The order a run ends in.
    static let finishOrder: [FinishStep] = [
        .failuresReported, .linesOnFile, .timersStopped, .unbuiltSelectionUncounted,
        .conditionalState, .progressLine, .records, .cursors, .metricsTimer, .pruning,
        .summary, .dataChecks, .endPing, .signalWatcher, .runEnd, .metricsFile,
    ]

    /// What the steps of a run's end share.
    final class Finishing {
        let begun: Begun
        let underway: Underway
        let progress: Progress
        var recordsFailed = 0
        /// A replay's selected tasks the job no longer builds.
        var unmatched = 0
        var summary: RunSummary?

        init(_ begun: Begun, _ underway: Underway, progress: Progress) {
            self.begun = begun
            self.underway = underway
            self.progress = progress
        }
    }

    /// Ends a run, step by step in ``finishOrder``; its summary.
    func finish(_ begun: Begun, _ underway: Underway, progress: Progress) async -> RunSummary {
        let finishing = Finishing(begun, underway, progress: progress)
        for step in Self.finishOrder { await perform(step, finishing) }
        return finishing.summary ?? summarize(begun, underway, counts: progress.snapshot)
    }

    /// One step of a run's end.
    private func perform(_ step: FinishStep, _ finishing: Finishing) async {
        let (begun, underway) = (finishing.begun, finishing.underway)
        switch step {
        case .failuresReported: underway.reporter.finish()
        case .linesOnFile: begun.log.flush()
        case .timersStopped:
            underway.deadline?.cancel()
            underway.watchdog.cancel()
            underway.flusher?.cancel()
        case .unbuiltSelectionUncounted:
            if case .selection(let selection, _) = source, begun.stop.cause == nil,
                !underway.vanished.withLock({ $0 })
            {
                // Selected tasks the job no longer builds never ran: the replay refuses them
                // (``ReplaySelection/unmatched``). Patterns were never counted before running:
                // only the ids are taken off.
                finishing.progress.tasksFound(-selection.unmatchedCount)
                // Not a window a later run fetched (its cursor holds it): nothing to send.
                finishing.unmatched = selection.unmatched.filter { since?.kept[$0] == nil }.count
            }
        case .conditionalState:
            do {
                try underway.state?.flush()
            } catch {
                console.error("courier: cannot keep the conditional state: \(error)")
            }
        case .progressLine:
            underway.ticker?.cancel()
            if showsProgress { console.overwriteLine() }
        case .records:
            finishing.recordsFailed = await finishRecords(
                begun, underway,
                everyTaskEnded: sourceSpent.withLock { $0 }
                    && finishing.progress.everyCountedTaskEnded)
        case .cursors:
            do {
                let blocked = cursorsFeedingFailures()
                since?.withhold(blocked)
                try since?.flush(run: begun.runID, redeeming: redeemable(begun, blocked))
            } catch {
                console.error("courier: cannot keep the since cursors: \(error)")
            }
        case .metricsTimer: underway.metricsTicker?.cancel()
        case .pruning: prune(begun, underway, counts: finishing.progress.snapshot)
        case .summary: finishing.summary = summarizeEnd(finishing)
        case .dataChecks:
            if let summary = finishing.summary {
                finishing.summary = judgeChecks(summary, counts: finishing.progress.snapshot)
            }
        case .endPing:
            guard let summary = finishing.summary else { return }
            await underway.pings?.ended(
                exitCode: summary.exitCode,
                body: options.summaryLine?(summary) ?? Self.shortSummary(summary, job: job.name),
                log: begun.log)
        case .signalWatcher: begun.signals.stop()
        case .runEnd: finishing.summary = finishing.summary.map { writeRunEnd($0, begun) }
        case .metricsFile:
            if let metrics = begun.metrics, let summary = finishing.summary {
                await finishMetrics(metrics, summary: summary, started: begun.started)
            }
        }
    }

    /// The run's figures at its end, with (for a repair) what the job's history still lacks.
    private func summarizeEnd(_ finishing: Finishing) -> RunSummary {
        let (begun, underway) = (finishing.begun, finishing.underway)
        let short = console.redactor.shortSecretsLearned
        if short > 0 {
            // As for a short `${env:…}` value at the start (RunCommand), said once it is known.
            console.error(
                "courier: \(job.name): warning: \(short) captured secret value\(short == 1 ? " was" : "s were") shorter than \(Redactor.minimumLength) characters: redacted where a secret header holds it whole, but not searched for in URLs, bodies or messages, where the log may show it"
            )
        }
        var summary = summarize(begun, underway, counts: finishing.progress.snapshot)
        summary.recordsFailed = finishing.recordsFailed
        summary.notReplayed = options.refusedReplays + finishing.unmatched
        // A repair says what the job's whole history still lacks: every log of the job
        // (other shards' too), this run's lines on file since `linesOnFile`.
        if options.resume != nil || source.completesHistory, !options.logToStandardOutput,
            !summary.logVanished
        {
            // A resume of the whole job that ran to its end walked every task: what it did
            // not do is in its counts, so the history is whole from here.
            let walkedAll =
                options.resume != nil && source.isWholeJob && options.shard == nil
                && summary.interruptedBy == nil
            // This run, ending now, has reached every task it owns unless it was stopped.
            let (missing, held, whole, mine) = JobHistory.notDone(
                folder: options.logDirectory.appendingPathComponent(job.name),
                current: summary.interruptedBy == nil
                    ? begun.logURL.standardizedFileURL.path : nil,
                owns: options.shard.map { shard in
                    { [job] in ReplaySelection.runs($0, on: shard, in: job) }
                }, walkedBy: walkedAll ? begun.runID : nil)
            // This run's tasks it never reached count too, though no line may say so: a run
            // stopped before it reached a task wrote none for it, and the history looked
            // complete ("every task done" after a resume cut by its deadline). Those it
            // reached have their lines in the history, which decides (a done task sent again
            // for its captures, failing now, stays done there).
            let counts = finishing.progress.snapshot
            summary.missing = max(missing, counts.total - counts.done)
            summary.missingHeld = held
            summary.missingElsewhere = max(0, missing - held - mine)
            // A run stopped before its captures fed every task leaves tasks no line names: the
            // count is then a floor, as without a whole run (trial P: "4 not done" of 32).
            summary.historyPartial = (!whole && !walkedAll) || summary.unlisted
            olderNight(&summary)
        } else if summary.failed > 0, job.tasks.contains(where: \.isWrite) || source.isLogReplay,
            !options.logToStandardOutput, !summary.logVanished
        {
            // The repair the summary offers would hold these: it says so. A replay of logs
            // alone (its job has no tasks) holds again the writes it held (trial BBB: its
            // repair line named the same replay, which held them again).
            summary.repairHolds =
                source.isLogReplay
                ? summary.writesHeld : WriteRule.heldOnRepair(log: begun.logURL)
        }
        if job.tasks.contains(where: { $0.window != nil }), !source.isLogReplay,
            !options.logToStandardOutput, !summary.logVanished
        {
            summary.otherLines = JobHistory.otherLines(
                folder: options.logDirectory.appendingPathComponent(job.name),
                current: begun.logURL.standardizedFileURL.path, records: recordsStore.root)
            ownLine(&summary, log: begun.logURL)
        }
        if let failure = summary.logFailure {
            console.error("courier: the log is incomplete: \(failure)")
        }
        return summary
    }

    /// `run.end` written; `summary` with the log's failure, if writing it failed.
    private func writeRunEnd(_ summary: RunSummary, _ begun: Begun) -> RunSummary {
        var summary = summary
        try? begun.log.runEnd(
            duration: summary.duration, total: summary.total, ok: summary.ok,
            failed: summary.failed, requests: summary.requests, exitCode: summary.exitCode,
            interrupted: summary.interruptedBy != nil, stoppedBy: summary.stopReason,
            alreadyDone: options.resume == nil ? nil : summary.alreadyDone,
            ignored: summary.ignored, unlisted: summary.unlisted, checks: summary.checkFailures,
            notReplayed: summary.notReplayed, recordsNotWritten: summary.recordsFailed)
        summary.logFailure = summary.logFailure ?? begun.log.failure
        return summary
    }

    /// `summary` with the job's `checks` judged (``DataCheckVerdict``), each failure said on
    /// stderr. Judged for a run of the whole job that ran to its end with every task ok:
    /// not for `--task`, a replay, an interrupted run, or one whose tasks failed (that is its
    /// verdict already); on a resume, `minRecords` counts what the runs it completes kept, and
    /// is not judged when one of their lines does not say.
    private func judgeChecks(_ summary: RunSummary, counts: Progress.Counts) -> RunSummary {
        var checks = job.checks
        var specs = job.tasks
        if case .job = source {} else { return summary }
        guard summary.interruptedBy == nil, summary.exitCode == 0,
            !checks.isEmpty || specs.contains(where: { !$0.checks.isEmpty })
        else { return summary }
        // Records kept by the runs a resume completes are counted from their `ok` lines; when a
        // line does not say, their `minRecords` verdict stands as that run's end said it, until
        // a whole run judges again.
        var carried: [DataCheckVerdict.Failure] = []
        if summary.alreadyDone > 0, uncountedRecords.withLock({ $0 }) {
            checks.minRecords = nil
            for index in specs.indices { specs[index].checks.minRecords = nil }
            carried = (options.resume?.failedChecks ?? []).filter {
                $0.check.hasSuffix("minRecords")
            }.map {
                DataCheckVerdict.Failure(
                    check: $0.check,
                    message:
                        "\($0.message) (as the run this resume completes ended; a whole run judges it again)"
                )
            }
        }
        let figures = DataCheckVerdict.Figures(
            records: recordCounts.withLock { $0 }, requests: counts.requests,
            unsuccessful: counts.unsuccessful, cursors: since?.cursors ?? [:])
        let verdict = DataCheckVerdict(
            job: checks, specs: specs, figures: figures, now: time.date())
        var summary = summary
        summary.checkFailures = carried + verdict.failures
        for failure in summary.checkFailures {
            console.error("courier: \(job.name): check \(failure.check) failed: \(failure.message)")
        }
        return summary
    }

    /// The run's records files, unless it was a replay of logged requests alone; how many
    /// failed.
    private func finishRecords(_ begun: Begun, _ underway: Underway, everyTaskEnded: Bool)
        async -> Int
    {
        guard let ledger = recordsLedger, source.savesOutputs else { return 0 }
        // A signal that came once every task had ended (in the grace it gives them) cut
        // nothing: each file is held only if a task writing it failed, as without a signal.
        if let signal = begun.signals.signal, !everyTaskEnded {
            ledger.interrupted("the run was interrupted (signal \(signal)) before every task ran")
        } else if case .deadline(let seconds) = begun.stop.cause, !everyTaskEnded {
            // A deadline that came before a fan-out had listed its tasks (a trial's records
            // file was written with half the items new and the rest missing).
            ledger.interrupted(
                "the run reached its deadline (\(DurationText.short(seconds))) before every task ran"
            )
        } else if underway.vanished.withLock({ $0 }) {
            ledger.interrupted("the run stopped when its log was deleted")
        }
        return await commitRecords(ledger, run: begun.runID, log: begun.logURL)
    }

    /// Prunes what is gone, when only a whole run of the job with every task ok decides it.
    private func prune(_ begun: Begun, _ underway: Underway, counts: Progress.Counts) {
        if let pruning, case .job = source, options.resume == nil, options.shard == nil,
            begun.stop.cause == nil, !underway.vanished.withLock({ $0 }),
            counts.failed == 0, counts.done == counts.total
        {
            pruning.prune(job: job, run: begun.runID, console: console)
        } else if pruning != nil {
            console.error(
                "courier: prune: skipped: only a whole run of the job with every task ok decides which items are gone"
            )
        }
    }

    /// The run's figures as its summary: how it ended and why.
    private func summarize(_ begun: Begun, _ underway: Underway, counts: Progress.Counts)
        -> RunSummary
    {
        let total = counts.total
        // A deadline that cut nothing (every task had started and ended within the grace
        // period) does not make the run an interrupted one: cron and healthchecks see 0 or 1.
        var cause = begun.stop.cause
        // Not when a fan-out had tasks still to list: they were cut though none was counted.
        if case .deadline = cause, counts.done == total, !begun.stop.cutInFlight,
            !unlisted.withLock({ $0 })
        {
            cause = nil
        }
        // Tasks an interrupted run never started are neither ok nor failed.
        let notRun = cause == nil ? total - counts.done : 0
        var summary = RunSummary(
            total: total, ok: counts.ok, failed: counts.failed + notRun,
            alreadyDone: counts.alreadyDone, requests: counts.requests,
            notModified: counts.notModified,
            duration: time.date().timeIntervalSince(begun.started),
            interruptedBy: cause?.exitSignal,
            logURL: begun.logURL, logFailure: begun.log.failure)
        if case .deadline(let seconds) = cause { summary.deadlineReached = seconds }
        summary.unlisted = cause != nil && unlisted.withLock { $0 }
        summary.ignored = counts.ignored
        (summary.writesResent, summary.writesHeld) = (counts.writesResent, counts.writesHeld)
        summary.rehearsal = options.offline != nil
        // The tasks sent for what they capture do not count: they were not chosen.
        if case .selection(let selection, _) = source, selection.hasPatterns,
            selection.matchedNothing
        {
            summary.nothingChosen = true
        }
        if underway.vanished.withLock({ $0 }) {
            summary.logFailure =
                "\(begun.logURL.relativePath) was deleted (or its folder) during the run; the run stopped"
            summary.logVanished = true
        }
        return summary
    }

    /// The ids of the `since` tasks whose captured values fed a task that failed, was
    /// skipped, or did not run (a stopped run) in this run: their cursors stay where they
    /// were, so that the next run fetches those items again. (A trial's listing moved its
    /// cursor past an item whose detail request failed, and no later night or repair ever
    /// fetched it again; a SIGTERM after the listing did the same to the items not reached.)
    private func cursorsFeedingFailures() -> (String) -> Bool {
        let failed = unsettledSpecs.withLock { $0 }
        guard !failed.isEmpty else { return { _ in false } }
        let blocked = job.tasks.indices.filter { index in
            job.tasks[index].since != nil || job.tasks[index].window != nil
        }.filter { !dependents(of: $0).isDisjoint(with: failed) }
        let globs = blocked.map { ReplaySelection.glob(job.tasks[$0].id) }
        return { id in globs.contains { fnmatch($0, id, 0) == 0 } }
    }

    /// The `since` tasks whose kept values stood in for them in a whole-job resume that ran
    /// to its end, with nothing they fed failed or unrun: the run that kept them, by id. A
    /// value that run withheld for them may now be their cursor (``RepairCursors``). Not in
    /// a `--task` run or on a shard, which leave tasks out.
    private func redeemable(_ begun: Begun, _ blocked: (String) -> Bool) -> [String: String] {
        guard options.resume != nil, options.only.isEmpty, options.shard == nil,
            case .job = source, begun.stop.cause == nil
        else { return [:] }
        return keptFrom.withLock { $0 }.filter { id, _ in
            !blocked(id) && job.tasks.contains { $0.id == id && $0.since != nil }
        }
    }

    /// The specs that take what `spec` captures, directly or through another capture.
    private func dependents(of spec: Int) -> Set<Int> {
        var found = Set<Int>()
        var names = Set(job.tasks[spec].captures.map(\.name))
        while !names.isEmpty {
            let taking = job.tasks.indices.filter { index in
                !found.contains(index)
                    && (!job.tasks[index].inputs.isDisjoint(with: names)
                        || job.tasks[index].captureSource.map { names.contains($0.capture) } == true)
            }
            found.formUnion(taking)
            names = Set(taking.flatMap { job.tasks[$0].captures.map(\.name) })
        }
        return found
    }
}
