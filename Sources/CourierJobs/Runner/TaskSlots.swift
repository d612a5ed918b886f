import Courier
import Foundation

extension JobRunner.TaskSource {
    /// Where a run's slots take their next task from: the source, being read.
    struct Cursor: Sendable {
        /// Present for a job's own tasks: it is told when each ends.
        let feed: TaskFeed?
        let next: @Sendable () -> TaskFeed.Item
    }
}

/// How a run keeps `concurrency` tasks in flight: one child task per slot, each taking its
/// next task itself when the last one ends.
///
/// A slot runs task after task on one curl loop. A child task per job task, started by the
/// scheduler each time one ended, cost a task creation and two thread hand-offs per job task
/// (the ending task woke the scheduler on its loop, which started the next task on another),
/// and built every task on the scheduler's one thread.
extension JobRunner {
    /// What a run's slots share.
    struct TaskSlots: Sendable {
        let cursor: TaskSource.Cursor
        let shared: AnyHTTPClient
        let log: RunLog
        let progress: Progress
        let reporter: FailureReporter
        let state: ConditionalState?
        let tokens: [String: CapturedToken]
        /// The run's OAuth2 clients and their tokens.
        let oauth2: OAuth2Sessions
        /// Which tasks the run sends (shard, resume, replay or `--task`).
        let selection: TaskSelection
        /// When the run started (a paced replay keeps the logged gaps from it).
        let startedAt: ContinuousClock.Instant
        /// Whether the progress line is drawn for a job that fans out: it then says while
        /// children are still being found.
        let tracksDiscovery: Bool
    }

    /// What a slot does next.
    enum NextStep {
        case run(ExpandedTask)
        /// Nothing can start until the feed's change count moves past the value.
        case wait(Int)
        /// Nothing left to start: the source is spent, or the run is stopping.
        case end
    }

    /// What a task sent says first: counted as found, a write sent again with its key, its
    /// records settled, a named write another id's write made.
    private func sending(_ send: TaskSelection.Send, of task: ExpandedTask, _ slots: TaskSlots)
        -> ExpandedTask
    {
        if send.found { slots.progress.tasksFound(1) }
        if let run = send.unknownIn {
            slots.progress.write(resent: true)
            slots.reporter.report(
                "task \(task.id): its write's outcome in run \(run) is unknown; sent again with its idempotency key (made once only if the server honours the key)"
            )
        }
        if let settled = send.recordsSettled {
            settledRecords(of: task, done: settled == .done ? true : nil)
        }
        if let other = send.madeAs {
            slots.reporter.report(
                "task \(task.id): named, it sends the request task \(other)'s write made (a 2xx answered it): made again"
            )
        }
        return send.task
    }

    /// Takes items from the source until one is a task to run. The others are settled on the
    /// way: another shard's task, one an earlier run did, one that does not build (logged and
    /// counted as failed), one skipped because its input failed. Not inlined into ``occupy``,
    /// whose async frame would keep room for its temporaries for the whole of every task.
    @inline(never)
    func nextStep(_ slots: TaskSlots) -> NextStep {
        let cursor = slots.cursor
        while !stopping.withLock({ $0 }), !Task.isCancelled {
            let item = cursor.next()
            if slots.tracksDiscovery, let feed = cursor.feed {
                slots.progress.setDiscovering(feed.isDiscovering)
            }
            // Fan-out children are tasks validation could not count.
            if cursor.feed != nil, slots.selection.chosen == nil, let spec = item.spec,
                job.tasks[spec].captureSource != nil
            {
                slots.progress.tasksFound(1)
            }
            switch item {
            case .task(let task):
                if let runnable = runnable(task, slots) { return .run(runnable) }
            case .skipped(let skipped) where !runsHere(skipped, slots):
                if slots.selection.countedElsewhere(skipped.id) {
                    slots.progress.taskInOtherShard()
                }
                cursor.feed?.finished(skipped.spec, ok: false, id: skipped.id)
            case .failure(let error, let spec, let id):
                // A task that does not build (validation checked what it could; a lines file
                // changed underneath, or a captured value makes a bad URL).
                recordsLedger?.unknown(spec: spec, task: id)
                guard claims(id, slots) else {
                    cursor.feed?.finished(spec, ok: false, id: id)
                    continue
                }
                try? slots.log.invalid(task: id, reason: "\(error)")
                slots.reporter.report("\(error)")
                slots.progress.taskFinished(ok: false, requests: 0)
                cursor.feed?.finished(spec, ok: false, id: id)
            case .skipped(let skipped) where slots.selection.wasDone(skipped.id):
                // Done by an earlier run, and unbuildable now only because what it takes was
                // not captured again (a login held as a write answered before, or not needed
                // by what `--resume --task` chose): it stays done, without a line; counted
                // when the run chose it.
                if claims(skipped.id, slots) { slots.progress.taskAlreadyDone() }
                recordsLedger?.done(
                    spec: skipped.spec, task: skipped.id,
                    key: FNV1a.taskKey(job: job.name, task: skipped.id))
                // What it captured, when its run kept it, still goes to the tasks that take
                // it: a listing whose token input failed now hands its kept ids to its
                // children, which may need no token (a trial saw a failed child silently not
                // sent, with no line, when the login sent again failed).
                if let run = slots.selection.okRuns[FNV1a.taskKey(job: job.name, task: skipped.id)]
                {
                    _ = reuseKeptCaptures(
                        id: skipped.id, rules: job.tasks[skipped.spec].captures, run: run, slots)
                }
                cursor.feed?.finished(skipped.spec, ok: true, id: skipped.id)
            case .skipped(let skipped):
                settle(skipped, slots)
            case .wait(let changes):
                return .wait(changes)
            case .end:
                sourceSpent.withLock { $0 = true }
                return .end
            }
        }
        return .end
    }

    /// Logs and counts a task skipped because what it takes was not captured, when this run
    /// claims it; a write the history holds is told as held (``TaskSelection/held(_:spec:)``).
    private func settle(_ skipped: TaskFeed.SkippedTask, _ slots: TaskSlots) {
        recordsLedger?.unknown(spec: skipped.spec, task: skipped.id)
        defer { slots.cursor.feed?.finished(skipped.spec, ok: false, id: skipped.id) }
        guard claims(skipped.id, slots) else { return }
        if let (reason, general) = slots.selection.held(skipped.id, spec: job.tasks[skipped.spec]) {
            try? slots.log.skipped(task: skipped.id, reason: reason, kind: LogErrorKind.writeHeld)
            slots.reporter.failed(task: skipped.id, reason: reason, general: general, as: .held)
            slots.progress.write(resent: false)
        } else {
            try? slots.log.skipped(task: skipped.id, reason: skipped.reason)
            slots.reporter.failed(
                task: skipped.id, reason: skipped.reason, as: .skipped, byJob: skipped.byJob)
        }
        slots.progress.taskFinished(ok: false, requests: 0)
    }

    /// Whether this run settles a skipped task (``Shard/settlesSkip(of:spec:)``). A trial's
    /// shard resume, its login refused, skipped none of its failed children: the listing's
    /// skip was taken for another shard's.
    private func runsHere(_ skipped: TaskFeed.SkippedTask, _ slots: TaskSlots) -> Bool {
        slots.selection.shard?.settlesSkip(of: skipped.id, spec: job.tasks[skipped.spec]) ?? true
    }

    /// The task to send, as it is sent (``TaskSelection``), or `nil` when it is settled here:
    /// another shard's, one an earlier run did (or whose kept captures stand in for it), one a
    /// replay or `--task` run did not choose and does not need.
    private func runnable(_ task: ExpandedTask, _ slots: TaskSlots) -> ExpandedTask? {
        let capturing = !task.captures(in: job).isEmpty
        let keying = WriteRule.keying(task, in: job)
        var verdict = slots.selection.verdict(on: task, capturing: capturing, keying: keying)
        if case .reuseKept(let run) = verdict {
            if reuseKeptCaptures(of: task, run: run, slots) {
                // Its values go to the tasks that wait for them, and it is not sent again. A
                // resume counts it as done (`--resume --task` when it chose it); a replay or
                // `--task` run that did not choose it, not at all.
                let (claimed, found) = slots.selection.claims(task.id)
                if found { slots.progress.tasksFound(1) }
                if claimed { slots.progress.taskAlreadyDone() }
                settledRecords(of: task, done: true)
                slots.cursor.feed?.finished(task.specIndex, ok: true, id: task.id)
                return nil
            }
            verdict = slots.selection.sending(task, capturing: capturing, keying: keying)
        }
        switch verdict {
        case .otherShard(let counted):
            if counted { slots.progress.taskInOtherShard() }
            slots.cursor.feed?.finished(task.specIndex, ok: true, id: task.id)
        case .done(let found):
            if found { slots.progress.tasksFound(1) }
            slots.progress.taskAlreadyDone()
            // Done, and not needed again (``ResumeNeeds``): what its run kept still goes to
            // the fan-out that takes it, whose children are then found done and counted.
            if capturing { handOnKept(of: task, slots) }
            settledRecords(of: task, done: true)
            keepWindow(of: task)
            slots.cursor.feed?.finished(task.specIndex, ok: true, id: task.id)
        case .reuseKept:
            break
        case .doneByAnswer(let found, let reason):
            if found { slots.progress.tasksFound(1) }
            slots.progress.taskAlreadyDone()
            try? slots.log.doneByAnswer(task: task.id, reason: reason)
            slots.cursor.feed?.finished(task.specIndex, ok: true, id: task.id)
        case .send(let send):
            return sending(send, of: task, slots)
        case .notChosen:
            // Done, not chosen by `--resume --task` and not needed: its kept values make the
            // fan-out children the run chose, found done (the login was sent for them).
            if capturing, slots.selection.wasDone(task.id) { handOnKept(of: task, slots) }
            if settledRecords(of: task, done: nil) { keepWindow(of: task) }
            staleRecords(of: task, log: slots.log)
            slots.cursor.feed?.finished(task.specIndex, ok: true, id: task.id)
        case .hold(let reason, let general, let done, let found):
            if found { slots.progress.tasksFound(1) }
            settledRecords(of: task, done: done ? true : nil)
            if done {
                // Done, not a held write: counted once, and no failure for cron to mail (trial
                // T: counted as both, with no line in the log). A note says why it is not sent.
                if !options.quiet {
                    console.error(
                        "courier: \(job.name): task \(task.id) not sent: \(reason)"
                            .showingControlCharacters)
                }
                slots.progress.taskAlreadyDone()
            } else {
                slots.reporter.failed(task: task.id, reason: reason, general: general, as: .held)
                slots.progress.write(resent: false)
                try? slots.log.skipped(task: task.id, reason: reason, kind: LogErrorKind.writeHeld)
                slots.progress.taskFinished(ok: false, requests: 0)
            }
            slots.cursor.feed?.finished(task.specIndex, ok: done, id: task.id)
        }
        return nil
    }

    /// Whether this run reports a task that did not build or was skipped: every one, or in a
    /// replay or `--task` run, those it chose (counted now when a pattern chose them).
    private func claims(_ id: String, _ slots: TaskSlots) -> Bool {
        let (claimed, found) = slots.selection.claims(id)
        if found { slots.progress.tasksFound(1) }
        return claimed
    }

    /// One slot: runs `first`, then the tasks it takes itself, until there is none to run now
    /// (the scheduler then decides whether to wait for captures). Its frame is allocated per
    /// slot and lives as long as the slot: it stays small (736 bytes) by keeping ``execute``
    /// and ``nextStep`` out of it.
    @inline(never)
    func occupy(first: ExpandedTask, slots: TaskSlots) async {
        var task = first
        while true {
            if let offset = task.sendAt {
                // A paced replay keeps the logged gaps between requests.
                try? await time.sleep(
                    for: slots.startedAt.advanced(by: .seconds(offset)) - time.now())
            }
            let ok = await execute(
                task, shared: slots.shared, log: slots.log, progress: slots.progress,
                reporter: slots.reporter, state: slots.state, feed: slots.cursor.feed,
                tokens: slots.tokens, oauth2: slots.oauth2)
            if let records = task.records { recordsLedger?.ended(records, task: task.id, ok: ok) }
            slots.cursor.feed?.finished(task.specIndex, ok: ok, id: task.id)
            guard case .run(let next) = nextStep(slots) else { return }
            task = next
        }
    }

    /// Fills the slots, and again whenever one empties; waits for captures when tasks need
    /// values that running tasks have not handed on yet.
    /// Which tasks this run sends (``TaskSelection``), from its options and its source.
    private func taskSelection() -> TaskSelection {
        var chosen: ReplaySelection?
        var replaysNight = false
        if case .selection(let selected, let replayOf) = source {
            chosen = selected
            replaysNight = !replayOf.isEmpty
        }
        if let chosen, let shard = options.shard { chosen.settleElsewhere(on: shard, in: job) }
        var selection = TaskSelection(
            job: job.name, shard: options.shard,
            done: (options.resume?.done ?? []).union(options.doneElsewhere),
            okRuns: options.resume?.okRuns ?? options.history?.okRuns ?? [:],
            chosen: chosen,
            writes: options.writes ?? WriteHistory(),
            named: options.named,
            needed: chosen?.neededProducers(in: job, on: options.shard) ?? [],
            resumeNeeded: options.resume.map {
                ResumeNeeds.producers(
                    of: job, history: $0, choosing: chosen, shard: options.shard,
                    named: options.named)
            }, completing: Set(options.resume?.runs ?? []))
        selection.choosesSwapped = replaysNight
        return selection
    }

    func schedule(
        shared: AnyHTTPClient, log: RunLog, progress: Progress, state: ConditionalState?,
        oauth2: OAuth2Sessions, executors: [any TaskExecutor], reporter: FailureReporter
    ) async {
        let concurrency = options.concurrency ?? job.concurrency
        let cursor = makeCursor()
        defer {
            if let feed = cursor.feed {
                unsettledSpecs.withLock { $0 = feed.unsettledSpecs }
                unlisted.withLock { $0 = feed.isUnlisted }
            }
            cursor.feed?.close()
        }
        let slots = TaskSlots(
            cursor: cursor, shared: shared, log: log, progress: progress,
            reporter: reporter,
            state: state,
            tokens: cursor.feed.map {
                renewableTokens(
                    feed: $0, shared: shared, log: log, progress: progress, oauth2: oauth2)
            } ?? [:],
            oauth2: oauth2,
            selection: taskSelection(),
            startedAt: time.now(),
            tracksDiscovery: showsProgress && job.tasks.contains { $0.captureSource != nil })
        var nextExecutor = 0
        await withTaskGroup(of: Bool.self) { group in
            var running = 0
            var waiterRunning = false
            var waitingFor: Int?
            /// Starts slots up to the concurrency cap, each with its first task.
            func fill() {
                waitingFor = nil
                while running < concurrency {
                    switch nextStep(slots) {
                    case .run(let task):
                        running += 1
                        var executor: (any TaskExecutor)?
                        if !executors.isEmpty {
                            executor = executors[nextExecutor % executors.count]
                            nextExecutor += 1
                        }
                        group.addTask(executorPreference: executor) {
                            await self.occupy(first: task, slots: slots)
                            return true
                        }
                    case .wait(let changes):
                        waitingFor = changes
                        return
                    case .end:
                        return
                    }
                }
            }
            fill()
            while true {
                if let changes = waitingFor, !waiterRunning, let feed = cursor.feed {
                    guard running > 0 else {
                        // Cannot happen with a validated job (no cycles); never hang on it.
                        slots.reporter.report(
                            "internal error: tasks wait for captures that can no longer come"
                        )
                        break
                    }
                    // Wakes the loop when a running task captures something, so that children
                    // start while their parent is still paging.
                    waiterRunning = true
                    group.addTask { [stopping] in
                        await feed.waitForChange(after: changes) { stopping.withLock { $0 } }
                        return false
                    }
                }
                guard let wasSlot = await group.next() else { break }
                if wasSlot { running -= 1 } else { waiterRunning = false }
                fill()
            }
        }
    }

    /// The tasks to run: the job's, through a ``TaskFeed`` (which knows about captures), or a
    /// replay's list.
    private func makeCursor() -> TaskSource.Cursor {
        switch source {
        case .job, .selection:
            let feed = TaskFeed(
                job: job, cursors: since?.kept ?? [:], redactor: console.redactor,
                memoryLimit: options.captureMemoryLimit)
            return TaskSource.Cursor(feed: feed) { feed.next() }
        case .replay(let tasks, _):
            let list = Locked(tasks.makeIterator())
            return TaskSource.Cursor(feed: nil) {
                list.withLock { $0.next() }.map { .task($0) } ?? .end
            }
        }
    }
}
