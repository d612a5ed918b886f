import Foundation

/// Whether `--resume` or `replay` sends a write again (docs/job-file.md, "Writes that happen
/// once"), as a pure decision on what the history says of it (``WriteHistory``):
///
/// - a write answered 2xx is never sent again: the server took it, whatever the task's
///   outcome (an unmet expectation, say) and whatever `--all` asks;
/// - a write whose outcome is unknown (cut off under way, or failed after it may have reached
///   the server) is sent again only with its idempotency key, which lets the server recognise
///   the repeat;
/// - a task named on the command line (`--task ID`, the id itself, not a pattern) is sent as
///   asked: the user has checked;
/// - a write answered 2xx by a replay of the log alone (which saved nothing) is done by that
///   answer when it has nothing else to do, and else sent again with its key, if it has one
///   (``verdict(on:of:keying:capturing:writes:named:choseNone:)`` puts the rules together).
enum WriteRule {
    /// How a write goes out: with its idempotency key (the value its request carries), or
    /// without one. The history knows a keyed write by its key (``WriteHistory``).
    enum Keying: Equatable, Sendable {
        case unkeyed
        case key(String)

        var keyed: Bool { self != .unkeyed }
        var value: String? {
            if case .key(let value) = self { return value }
            return nil
        }
    }

    enum Decision: Equatable {
        /// Sent, as any task.
        case send
        /// Sent again with its key: the outcome of the write `run` sent is unknown.
        case sendWithKey(unknownIn: String)
        /// Not sent, for this reason (a sentence naming what to do).
        case hold(String)

        /// The reason a write is held, `nil` when it is sent.
        var heldReason: String? {
            if case .hold(let reason) = self { return reason }
            return nil
        }
    }

    /// - Parameters:
    ///   - keyed: the request carries an idempotency key.
    ///   - named: the command line named the task by its id.
    static func decide(task: String, fact: WriteHistory.Fact?, keyed: Bool, named: Bool)
        -> Decision
    {
        guard let fact, !named else { return .send }
        switch fact {
        case .answered(let run, let status):
            return .hold(
                "its write was answered \(status) by run \(run), and a resume or replay never sends a write twice; name it (--task \(task)) to send it again"
            )
        case .unknown(let run) where keyed:
            return .sendWithKey(unknownIn: run)
        case .unknown(let run):
            return .hold(
                "its write went out in run \(run) and no answer says what became of it; without an idempotency key it is not sent again: check the server, then name it (--task \(task)) to send it again, or give the task \"idempotencyKey\""
            )
        }
    }

    /// How many of a run's failed tasks a repair of its log would hold: writes answered 2xx
    /// whose task failed all the same, and writes of unknown outcome sent without their key.
    static func heldOnRepair(log: URL) -> Int {
        heldOnRepair(TaskHistory.read([log.path], warn: { _ in }))
    }

    /// Of the tasks `history` leaves not done, how many a repair would hold: those with a
    /// final line (it says whether the write carried its key), and the writes a killed run
    /// left under way, known by their `request.start` alone.
    static func heldOnRepair(_ history: TaskHistory) -> Int {
        let writes = history.writes
        var candidates = history.writeStarts
        for (key, line) in history.finals {
            if let task = line.task { candidates[key] = (task, line.idempotencyKey) }
        }
        return candidates.filter { key, write in
            guard !history.done.contains(key) else { return false }
            // One the repair held says so: another task's write sent its request, say (trial
            // YYY: not counted, and `next` named a resume that only held it again).
            if history.finals[key]?.errorKind == LogErrorKind.writeHeld { return true }
            let known = writes.key(task: key, write: write.key)
            guard let fact = writes[known] else { return false }
            // Answered 2xx on a log-only replay's `ok` line, with its key: done by that answer
            // or had again with the key, as the resume decides (``verdict``), never held.
            if write.key != nil, writes.answeredOK.contains(known) { return false }
            return decide(task: write.task, fact: fact, keyed: write.key != nil, named: false)
                .heldReason != nil
        }.count
    }

    /// `nil` when `task` is not a write (its spec says so, ``TaskSpec/isWrite``, or, for a
    /// request rebuilt from a log alone, its method); else the idempotency key its request
    /// carries, if any (in the header its spec names, or `Idempotency-Key`). The one reading
    /// of a task that the run, its dry runs and the replay decide from.
    static func keying(_ task: ExpandedTask, in job: Job) -> Keying? {
        guard task.isWrite(in: job) ?? WriteSettings.writes(task.request.method.rawValue) else {
            return nil
        }
        return task.request.headers[task.keyHeader(in: job) ?? "Idempotency-Key"].map {
            .key($0)
        } ?? .unkeyed
    }

    /// The key `writes` knows the write `task` sends by (``WriteHistory/key(task:write:)``).
    static func key(of task: String, _ keying: Keying, job: String, in writes: WriteHistory)
        -> UInt64
    {
        writes.key(task: FNV1a.taskKey(job: job, task: task), write: keying.value)
    }

    /// Why `task` is not sent, when it is a write the history holds; `nil` when it is sent.
    static func held(
        _ task: ExpandedTask, in job: Job, writes: WriteHistory, named: Set<String>
    ) -> String? {
        guard let keying = keying(task, in: job) else { return nil }
        if !named.contains(task.id),
            let other = doneAsAnother(
                task, job: job.name, capturing: !task.captures(in: job).isEmpty, writes: writes)
        {
            return doneAs(other)
        }
        if !named.contains(task.id),
            let reason = sentAsAnother(
                task.id, digest: task.writeDigest, job: job.name, writes: writes)
        {
            return reason
        }
        // Another task's refused request is sent, whatever key its id's own write went with.
        if !named.contains(task.id), swappedIn(task, job: job.name, writes: writes) != nil {
            return nil
        }
        if !named.contains(task.id),
            let reason = changedSince(task.id, keying, job: job.name, writes: writes)
        {
            return reason
        }
        let key = key(of: task.id, keying, job: job.name, in: writes)
        guard
            case .hold(let reason) = decide(
                task: task.id, fact: writes[key], keyed: keying.keyed,
                named: named.contains(task.id))
        else { return nil }
        let capturing = !task.captures(in: job).isEmpty
        if againWithKey(task, key: key, keyed: keying.keyed, capturing: capturing, writes: writes) {
            return nil
        }
        // As the run counts it (trial BBB: a dry run said to name it, and the replay then
        // counted it done).
        if doneByAnswer(task, key: key, capturing: capturing, writes: writes) {
            return
                "a replay of the log alone had its 2xx answer, and it has nothing else to do: done by that answer"
        }
        return reason
    }

    /// Why the write a logged `line` sent (a replay of the log alone sends it again) is held;
    /// `nil` when it is sent. A write by its method, with a key by its logged header.
    static func held(logged line: LogLine, writes: WriteHistory, named: Set<String>) -> String? {
        guard let id = line.task, WriteSettings.writes(line.method ?? ""), !line.safe else {
            return nil
        }
        if !named.contains(id),
            let reason = writes.unknownHistory?.replacingOccurrences(
                of: "--task ID", with: "--task \(id)")
                ?? doneAsAnother(id, digest: line.requestDigest, job: line.job, writes: writes)
                .map(doneAs)
                ?? sentAsAnother(id, digest: line.requestDigest, job: line.job, writes: writes)
        {
            return reason
        }
        let keyed =
            line.keyed || line.requestHeaders.contains { $0.name.lowercased() == "idempotency-key" }
        let key = writes.key(
            task: FNV1a.taskKey(job: line.job, task: id), write: line.idempotencyKey)
        return decide(task: id, fact: writes[key], keyed: keyed, named: named.contains(id))
            .heldReason
    }

    /// Why `id`, a task of `spec` known by its id alone (one skipped before it was built, or
    /// one a resume's needs weigh), is a write the history holds; `nil` when it is not one.
    /// `named`: the ids the command line named. A spec's `idempotencyKey` is what keys it.
    ///
    /// A keyed write is known by its key, which only its request gives: not built yet, it is
    /// not held here, and is judged once built (a login it needs is sent for it: an older
    /// night's write was taken as held by the next night's answer, its login left out, and
    /// the write then skipped for want of the token).
    static func held(
        _ id: String, spec: TaskSpec, job: String, writes: WriteHistory, named: Set<String>
    ) -> String? {
        guard spec.isWrite, !writes.facts.isEmpty else { return nil }
        let task = FNV1a.taskKey(job: job, task: id)
        let keyed = spec.writes.keyHeader != nil
        if keyed, writes.knowsByKey(task) { return nil }
        return decide(task: id, fact: writes[task], keyed: keyed, named: named.contains(id))
            .heldReason
    }

    /// Whether `task`, a write the history holds, is done by the 2xx that answered it on an
    /// `ok` line though the history does not count it done: a replay from the log alone
    /// sent it (such a replay saves nothing and checks no expectation, so it decides nothing
    /// in the history). Only a task that has nothing else to do is: no `save`, records,
    /// captures, pages, cursor or expectation beyond a 2xx. Trial S: every repair held such
    /// a write for ever, exit 1, and its advice (`--task`) would have sent it twice.
    /// `key`: the write's in `writes` (``key(of:_:job:in:)``).
    static func doneByAnswer(
        _ task: ExpandedTask, key: UInt64, capturing: Bool, writes: WriteHistory
    ) -> Bool {
        guard writes.answeredOK.contains(key), !writes.done.contains(key) else { return false }
        return nothingElse(task, capturing: capturing)
    }

    /// Whether `task`, a write, has nothing to do beyond its 2xx: no `save`, records,
    /// captures, pages, cursor or expectation.
    static func nothingElse(_ task: ExpandedTask, capturing: Bool) -> Bool {
        let expectation = task.expectation
        return task.save == nil && task.records == nil && task.paginate == nil
            && task.since == nil && task.expectStatus == nil && !capturing
            && expectation.json.isEmpty && expectation.headers.isEmpty
            && expectation.bodyContains.isEmpty && expectation.maxMs == nil
    }

    /// Why a write without an idempotency key that the history counts done is said to be:
    /// a run the resume does not complete answered it (a later night's), and such a write is
    /// known by its task alone. `nil` for any other write. The run and its dry run say it
    /// alike, with the name that sends it (trial AAA: done in silence).
    static func answeredElsewhere(
        _ task: String, _ keying: Keying, job: String, writes: WriteHistory,
        completing: Set<String>
    ) -> String? {
        guard keying == .unkeyed,
            case .answered(let run, let status) = writes[
                key(of: task, keying, job: job, in: writes)],
            !completing.contains(run)
        else { return nil }
        return
            "its write was answered \(status) by run \(run), and a write without an idempotency key is known by its task; if this run's differs, name it (--task \(task)) to send it"
    }

    /// Whether a resume that chose no task (`--resume LOG`, whose logs may leave out what the
    /// job's history did) counts `task`, a write the history holds, as done: the history has
    /// it done (trial T: it was said "not sent" and counted held, with no line in the log).
    /// One that captures, sent again for its values, stays held, as its dependents are.
    static func doneInHistory(key: UInt64, capturing: Bool, writes: WriteHistory) -> Bool {
        !capturing && writes.done.contains(key)
    }

    /// Whether `task`, a write the history holds, is sent again with its key: a 2xx answered
    /// it on an `ok` line that left it not done (a replay of the log alone, which saves
    /// nothing), and it has more to do than that answer (``doneByAnswer(_:key:capturing:writes:)`` is false for it).
    /// The key makes the server answer the repeat as it answered the first, so the task gets
    /// the answer to save, keep or check (trial U: every resume held such a write, exit 1,
    /// until it was named).
    static func againWithKey(
        _ task: ExpandedTask, key: UInt64, keyed: Bool, capturing: Bool, writes: WriteHistory
    ) -> Bool {
        keyed && writes.answeredOK.contains(key) && !writes.done.contains(key)
            && !doneByAnswer(task, key: key, capturing: capturing, writes: writes)
    }

    /// What a resume or `replay --job` does with a write, every rule above together.
    enum Verdict: Equatable {
        case send
        /// Sent again with its key: its outcome in run `unknownIn` is unknown, or (`nil`) a
        /// replay of the log alone had its answer (``againWithKey(_:key:keyed:capturing:writes:)``).
        case sendWithKey(unknownIn: String?)
        /// Done by the 2xx a replay of the log alone had (``doneByAnswer(_:key:capturing:writes:)``).
        case doneByAnswer
        /// Not sent, and done: another task's write (the same write under its old id) was
        /// answered 2xx, and it has nothing else to do (``doneAsAnother(_:job:capturing:writes:)``).
        case doneAsAnother(task: String)
        /// Done in the job's history (``doneInHistory(key:capturing:writes:)``).
        case doneInHistory
        /// Not sent, for this reason.
        case hold(String)
        /// Not sent, and not done: the night being repaired sent another request for it
        /// (``changedSince(_:_:job:writes:)``), or another task sent its request
        /// (``sentAsAnother(_:digest:job:writes:)``), for this reason.
        case changed(String)
    }

    /// Why a keyed write is not sent: its last attempt in the runs a repair completes carried
    /// another idempotency key than the request the job builds now, so the job file or its
    /// environment changed since (a resume run after midnight with a date in the body; trial
    /// GGG: an edited amount made two new charges beside the two of unknown outcome, and a
    /// repair with the next night's environment found the next night's write done and never
    /// made the failed night's). `nil` for any other write.
    static func changedSince(_ task: String, _ keying: Keying, job: String, writes: WriteHistory)
        -> String?
    {
        guard let current = keying.value,
            let logged = writes.nightKeys[FNV1a.taskKey(job: job, task: task)], logged != current
        else { return nil }
        return
            "the run being repaired sent it as another request (another idempotency key): the job file or its environment changed since; repair it with that run's environment (its ${env-public:…} values), or name it (--task \(task)) to send the request the job builds now"
    }

    /// The one decision on `task`, a write (`keyed`: its request carries its key), that the
    /// run (``TaskSelection``) and its dry run (``ResumePlan``) follow. `choseNone`: a resume
    /// that chose no task, for which the history's word that the task is done stands.
    static func verdict(
        on task: ExpandedTask, of job: String, keying: Keying, capturing: Bool,
        writes: WriteHistory, named: Bool, choseNone: Bool
    ) -> Verdict {
        if !named, let other = doneAsAnother(task, job: job, capturing: capturing, writes: writes) {
            return .doneAsAnother(task: other)
        }
        // Another task's write of this request first: its key is another one too (trial TTT:
        // a swapped keyed write was said to be "another idempotency key", and its advice made
        // the charge twice).
        if !named,
            let reason = sentAsAnother(task.id, digest: task.writeDigest, job: job, writes: writes)
                ?? writes.unknownHistory?.replacingOccurrences(
                    of: "--task ID", with: "--task \(task.id)")
        {
            return .changed(reason)
        }
        // Another task's refused request is sent: what its id's own write was (another
        // request, with another key) says nothing of it (trial WWW: held as "another
        // idempotency key", never made).
        if !named, swappedIn(task, job: job, writes: writes) != nil { return .send }
        if !named, let reason = changedSince(task.id, keying, job: job, writes: writes) {
            return .changed(reason)
        }
        let key = key(of: task.id, keying, job: job, in: writes)
        switch decide(task: task.id, fact: writes[key], keyed: keying.keyed, named: named) {
        case .send: return .send
        case .sendWithKey(let run): return .sendWithKey(unknownIn: run)
        case .hold(let reason):
            if doneByAnswer(task, key: key, capturing: capturing, writes: writes) {
                return .doneByAnswer
            }
            if choseNone, doneInHistory(key: key, capturing: capturing, writes: writes) {
                return .doneInHistory
            }
            if againWithKey(
                task, key: key, keyed: keying.keyed, capturing: capturing, writes: writes)
            {
                return .sendWithKey(unknownIn: nil)
            }
            return .hold(reason)
        }
    }

    /// Whether `glob`, given on the command line, names one task by its id (no pattern).
    static func names(_ glob: String) -> Bool {
        !ReplaySelection.isPattern(glob)
    }
}
