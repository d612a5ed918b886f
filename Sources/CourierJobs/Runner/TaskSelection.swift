import Courier

/// Which of a job's tasks this run sends, decided task by task as the feed hands them out: a
/// shard's own (and every task that captures, on every shard), those a resume finds not done,
/// those a replay or `run --task` chose (and those that capture what the chosen ones need).
///
/// A value beside ``TaskSchedule``: the schedule says when a task may start, this says whether
/// it is sent at all, so that each combination of shard, resume and replay is tested without a
/// run (TaskSelectionTests). ``JobRunner/nextStep(_:)`` does what its verdicts say: the
/// progress counts, the records ledger, the feed.
struct TaskSelection: Sendable {
    /// The job's name, which task keys are made with.
    let job: String
    let shard: Shard?
    /// `--resume`: the keys of the tasks an earlier run did.
    let done: Set<UInt64>
    /// `--resume` and `replay --job`: for each done task that captures, the run of its latest
    /// `ok`, whose kept values may stand in for sending it again (``KeptCaptures``).
    let okRuns: [UInt64: String]
    /// A replay with `--job`, or `run --task`: the tasks it chose.
    let chosen: ReplaySelection?
    /// What the history says of the job's writes (``WriteRule``).
    var writes = WriteHistory()
    /// The task ids the command line named (`--task ID`, not a pattern): sent as asked.
    var named: Set<String> = []
    /// With ``chosen``: the specs whose captures the chosen tasks may need
    /// (``ReplaySelection/neededProducers(in:)``); other tasks that capture are not sent.
    var needed: Set<Int> = []
    /// A resume's: the specs whose captures a task not done (and chosen, with ``chosen``) may
    /// need (``ResumeNeeds``); a done task of any other spec that captures is done, not sent
    /// again. `nil`: every one is.
    var resumeNeeded: Set<Int>? = nil
    /// A resume's: the runs it completes. A write without a key that another run answered is
    /// done by its task's word, and the run says so (a held write that is done).
    var completing: Set<String> = []
    /// A `replay --job`'s: a write ``chosen`` leaves out whose id now sends another task's
    /// request the night did not make (ids swapped since) is chosen too: the night's failure
    /// is its now (trial XXX: never sent, and the history said every task done).
    var choosesSwapped = false

    /// What becomes of one task.
    enum Verdict {
        /// Another shard's task; `counted`: the run's total counted it before running (a
        /// whole run's task, or one a replay named by its id), and takes it off now.
        case otherShard(counted: Bool)
        /// Done by an earlier run, and it captures nothing: not sent; `found`: as
        /// ``Send/found`` (a `--resume --task` pattern chose it).
        case done(found: Bool)
        /// Done by an earlier run, and it captures: the values that run kept stand in for it
        /// when they can be had; else it is decided again by ``sending(_:capturing:)``.
        case reuseKept(run: String)
        /// Sent.
        case send(Send)
        /// Not chosen by a replay or `--task` run, and not needed for its captures: settled
        /// without a line (a done one's kept values still go to the tasks that take them).
        case notChosen
        /// A write the history says must not be sent again (``WriteRule``), for this reason
        /// (`general`: the same for any task, its id written `ID`); `done`: its task is done,
        /// and stays so without a line (a replay with `--all`); `found`: as ``Send/found``.
        case hold(String, general: String, done: Bool, found: Bool)
        /// A write a replay from the log alone sent, answered 2xx, that has nothing else to
        /// do (``WriteRule/doneByAnswer(_:key:capturing:writes:)``): done, and said so in the
        /// log, so that the history counts it done.
        case doneByAnswer(found: Bool, reason: String = "answeredByReplay")
    }

    /// A task to send, as it is sent.
    struct Send {
        /// The task, its records left out when it is sent for its captures only.
        var task: ExpandedTask
        /// Its records, when they are not sent: done (a resume's task run again for its
        /// captures), or as the history says (a task a replay did not choose).
        var recordsSettled: RecordsSettled?
        /// Whether the run counts it as found now: a task a pattern chose, or one sent for its
        /// captures, which the validated total did not count.
        var found = false
        /// A write sent again with its key, whose outcome in this run was unknown.
        var unknownIn: String?
        /// A named write whose request another task's write made (answered 2xx): the task
        /// that made it, for the run to say this one makes it again.
        var madeAs: String?
    }

    /// Whose word settles a task's records when it does not send them.
    enum RecordsSettled: Equatable {
        case done
        case byHistory
    }

    /// The verdict on `task` (`capturing`: its spec has captures; `keying`: `nil` when it is
    /// not a write, else the idempotency key it carries, if any).
    func verdict(on task: ExpandedTask, capturing: Bool, keying: WriteRule.Keying? = nil)
        -> Verdict
    {
        if let shard, !shard.runs(taskID: task.id, capturing: capturing) {
            return .otherShard(counted: countedElsewhere(task.id))
        }
        // A task's key is a hash of its id: made only when there is a history to look it up in.
        if !done.isEmpty || !okRuns.isEmpty {
            let key = FNV1a.taskKey(job: job, task: task.id)
            // A write whose id now sends another task's request (``WriteRule/sentByAnother``)
            // is not done by its id's write: that request's fate decides.
            if !capturing, done.contains(key),
                keying == nil || named.contains(task.id)
                    || !WriteRule.sentByAnother(task, job: job, writes: writes)
            {
                // `--resume --task`: counted only when chosen (the total counts the chosen).
                guard chosen != nil else { return .done(found: false) }
                let (claimed, found) = claims(task.id)
                return claimed ? .done(found: found) : .notChosen
            }
            // A resume: a done task that captures what no task not done takes is done
            // (`--resume --task`: when chosen, and not named, which sends it as asked; a task
            // not chosen is settled, its kept values handed on all the same).
            if capturing, let resumeNeeded, done.contains(key), let spec = task.specIndex,
                !resumeNeeded.contains(spec), !named.contains(task.id)
            {
                guard chosen != nil else { return .done(found: false) }
                let (claimed, found) = claims(task.id)
                return claimed ? .done(found: found) : .notChosen
            }
            // A task `run --task` chose is sent, though kept values could stand in for it:
            // its name asked for it (it was never sent, and the run said no task matched).
            if capturing, let run = okRuns[key],
                !(done.isEmpty && chosen?.selects(id: task.id) == true)
            {
                return .reuseKept(run: run)
            }
        }
        return sending(task, capturing: capturing, keying: keying)
    }

    /// Whether `task`, to be sent unless kept values stand in for it, is sent, and as what:
    /// a write only as ``WriteRule`` allows.
    func sending(_ task: ExpandedTask, capturing: Bool, keying: WriteRule.Keying? = nil)
        -> Verdict
    {
        let verdict = choosing(task, capturing: capturing)
        guard let keying, case .send(var send) = verdict,
            !writes.facts.isEmpty || !writes.nightKeys.isEmpty || writes.unknownHistory != nil
        else { return verdict }
        switch WriteRule.verdict(
            on: task, of: job, keying: keying, capturing: capturing, writes: writes,
            named: named.contains(task.id), choseNone: resumeNeeded != nil && chosen == nil)
        {
        case .send where named.contains(task.id):
            // Sent as named; said when another id's write made this request (trial YYY:
            // `--task` with the night's id after a swap made it again, in silence).
            send.madeAs = WriteRule.doneAsAnother(
                task.id, digest: task.writeDigest, job: job, writes: writes)
            return .send(send)
        case .send: return verdict
        case .sendWithKey(let run):
            send.unknownIn = run
            return .send(send)
        case .doneByAnswer: return .doneByAnswer(found: send.found)
        case .doneAsAnother:
            // Its line says so (trial SSS: it said `answeredByReplay`, with no replay).
            return .doneByAnswer(found: send.found, reason: "answeredAsAnotherTask")
        case .doneInHistory:
            // A replay that chose it still says why it is not sent.
            // A write without a key that a run this resume does not complete answered (a
            // later night's): done, since the history knows such a write by its task alone,
            // and said so, with the name that sends it (trial AAA: done in silence).
            if let reason = WriteRule.answeredElsewhere(
                task.id, keying, job: job, writes: writes, completing: completing)
            {
                return .hold(reason, general: reason, done: true, found: send.found)
            }
            return .done(found: send.found)
        case .hold(let reason):
            // The same reason with `ID` for the task's id: one reason for every write held so,
            // which the terminal counts as one.
            let key = WriteRule.key(of: task.id, keying, job: job, in: writes)
            let general =
                WriteRule.decide(task: "ID", fact: writes[key], keyed: keying.keyed, named: false)
                .heldReason ?? reason
            return .hold(
                reason, general: general, done: writes.done.contains(key), found: send.found)
        case .changed(let reason):
            let general = reason.replacingOccurrences(of: "--task \(task.id)", with: "--task ID")
            return .hold(reason, general: general, done: false, found: send.found)
        }
    }

    /// Why a task of `spec` skipped under `id` (what it takes was not captured) is a write
    /// the history holds, and that reason for any task (``WriteRule``); `nil` when it is not
    /// one. A held write is told as held, whatever else kept it (a trial's held writes were
    /// "skipped: input task login did not succeed", and a repair said it would run them).
    func held(_ id: String, spec: TaskSpec) -> (reason: String, general: String)? {
        guard let reason = WriteRule.held(id, spec: spec, job: job, writes: writes, named: named)
        else { return nil }
        // The same reason with `ID` for the task's id, as `sending` gives it.
        let fact = writes[FNV1a.taskKey(job: job, task: id)]
        let general = WriteRule.decide(
            task: "ID", fact: fact, keyed: spec.writes.keyHeader != nil, named: false
        ).heldReason
        return (reason, general ?? reason)
    }

    /// Whether `task` is sent, and as what, before the rule on writes. Marks it as found by
    /// the replay's or `--task` run's choice (``ReplaySelection``).
    private func choosing(_ task: ExpandedTask, capturing: Bool) -> Verdict {
        var send = Send(task: task)
        guard let chosen else {
            if task.records != nil, done.contains(FNV1a.taskKey(job: job, task: task.id)) {
                // Done by an earlier run, and sent again for its captures only: its records
                // are the ones that run kept.
                send.task.records = nil
                send.recordsSettled = .done
            }
            return .send(send)
        }
        if let selected = chosen.admit(task) {
            send.task = selected
            send.found = chosen.isFromPattern(task.id)
            return .send(send)
        }
        if choosesSwapped, WriteRule.sentByAnother(task, job: job, writes: writes),
            WriteRule.doneAsAnother(task.id, digest: task.writeDigest, job: job, writes: writes)
                == nil
        {
            send.found = true
            return .send(send)
        }
        guard capturing, let spec = task.specIndex, needed.contains(spec) else { return .notChosen }
        // Not chosen, but what it captures may be what the chosen tasks need.
        send.task.records = nil
        send.recordsSettled = .byHistory
        send.found = true
        return .send(send)
    }

    /// Whether the run's total counted `id`, a task another shard sends: every task of a
    /// whole run; in a replay or `--task` run, one chosen by its id (settled here, so that it
    /// is not taken for a task the job no longer builds), never one a pattern would choose
    /// (counted only as found, which it is not).
    func countedElsewhere(_ id: String) -> Bool {
        guard let chosen else { return true }
        return chosen.settlesElsewhere(id: id)
    }

    /// Whether a resume's history says an earlier run did the task `id`.
    func wasDone(_ id: String) -> Bool {
        !done.isEmpty && done.contains(FNV1a.taskKey(job: job, task: id))
    }

    /// Whether this run reports a task that did not build or was skipped: every one, or in a
    /// replay or `--task` run, those it chose; and whether it counts it as found now.
    func claims(_ id: String) -> (claimed: Bool, found: Bool) {
        guard let chosen else { return (true, false) }
        guard chosen.claims(id: id) else { return (false, false) }
        return (true, chosen.isFromPattern(id))
    }
}
