import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier run JOB --resume --dry-run`: the requests the resume would send, found as the run
/// finds them (the same task feed, in the same order), with nothing sent.
///
/// A task the history counts as done is left out, and counted. A done task that captures is
/// listed as not sent when its run kept its values (``KeptCaptures``): they are fed to the
/// plan, so the fan-out children they make are listed one by one, done ones left out. A
/// capturing task that is sent again (its values not kept, or secret) is listed as sent; the
/// children it will make are then one line saying so, since their values come only when it
/// runs.
enum ResumePlan {
    static func print(
        _ job: Job, cursors: [String: String], resume: RunHistory, options: RunOptions,
        console: Console
    ) {
        let feed = TaskFeed(job: job, cursors: cursors, redactor: console.redactor)
        defer { feed.close() }
        let needed = neededProducers(job, options: options)
        let resumeNeeded = ResumeNeeds.producers(
            of: job, history: resume,
            choosing: options.only.isEmpty
                ? nil : ReplaySelection(job: job.name, globs: options.only),
            shard: options.shard, named: options.named)
        var tally = Tally()
        /// Specs whose values come only when their sent-again producer runs.
        var unknownProducers = Set<Int>()
        /// Specs that capture and are writes not sent again: what they capture never comes.
        var heldProducers = Set<Int>()
        loop: while true {
            let item = feed.next()
            switch item {
            case .task(let task):
                guard let spec = task.spec(in: job), let index = task.specIndex else {
                    feed.finished(task.specIndex, ok: true, id: task.id)
                    continue
                }
                defer { feed.finished(index, ok: true, id: task.id) }
                let planned = plan(
                    task, spec: spec, job: job, resume: resume, options: options,
                    needed: needed, resumeNeeded: resumeNeeded, feed: feed)
                switch planned {
                case .otherShard, .notChosen: continue
                case .done: tally.done += 1
                // Not chosen by `--task`, it is not counted (the run does not count it).
                case .kept: if chosen(task.id, options: options) { tally.done += 1 }
                case .sent, .resent: tally.sent += 1
                case .held:
                    // A write answered before is done as well (the run counts it both ways).
                    tally.held += 1
                    if resume.done.contains(FNV1a.taskKey(job: job.name, task: task.id)) {
                        tally.done += 1
                    }
                }
                if case .sent = planned, spec.hasCaptures { unknownProducers.insert(index) }
                if case .held = planned, spec.hasCaptures { heldProducers.insert(index) }
                if let line = planned.line(task: task, spec: spec, job: job),
                    !console.output(line.showingControlCharacters)
                {
                    return
                }
            case .skipped(let skipped):
                defer { feed.finished(skipped.spec, ok: true, id: skipped.id) }
                guard
                    let planned = settle(
                        skipped, job: job, resume: resume, options: options,
                        held: heldProducers, feed: feed),
                    let line = tally.count(planned)
                else { continue }
                guard console.output(line.showingControlCharacters) else { return }
            case .failure(let error, let spec, let id):
                guard console.output("\(id)\t(cannot be built: \(error))".showingControlCharacters)
                else { return }
                feed.finished(spec, ok: false, id: id)
            case .wait, .end:
                break loop
            }
        }
        guard let fansOut = printFanOuts(job, of: unknownProducers, console: console) else {
            return
        }
        let backend = options.backend ?? job.backend
        let (sent, done, held) = (tally.sent, tally.done, tally.held)
        console.output(
            "courier: \(job.name)\(options.shard.map { " (shard \($0))" } ?? ""): resume: \(sent) task\(sent == 1 ? "" : "s") to send\(fansOut ? " (and the children of what they capture)" : ""), \(done) done by earlier runs and not sent\(fansOut ? " (nor the children earlier runs did, counted as the run finds them)" : "")\(held > 0 ? ", \(held) write\(held == 1 ? "" : "s") not sent again" : ""), on \(backend.rawValue), concurrency \(options.concurrency ?? job.concurrency); dry run, nothing sent"
        )
    }

    /// One line for each fan-out whose producer is sent again: its children come only as it
    /// runs. Whether there was one; `nil` when the reader went away.
    private static func printFanOuts(_ job: Job, of producers: Set<Int>, console: Console) -> Bool?
    {
        var fansOut = false
        for spec in job.tasks {
            guard let source = spec.captureSource,
                let producer = job.tasks.firstIndex(where: {
                    $0.captures.contains { $0.name == source.capture }
                }), producers.contains(producer)
            else { continue }
            let line =
                "\(spec.id) for each of \(source.capture) (captured by \(job.tasks[producer].path) as it runs; children done by earlier runs are not sent)\t\(spec.method) \(RunCommand.describe(spec.target, baseURL: job.baseURL))\(RunCommand.describe(spec.query))"
            guard console.output(line.showingControlCharacters) else { return nil }
            fansOut = true
        }
        return fansOut
    }

    /// What the resume does with one task the feed hands out.
    enum Planned {
        /// Another shard's: not this plan's.
        case otherShard
        /// Not chosen by `--task`, and capturing nothing the chosen ones may need: not this
        /// plan's.
        case notChosen
        /// Done by an earlier run: not sent, not listed.
        case done
        /// Done, and its kept values handed on: not sent, listed as such.
        case kept(values: Int)
        /// Sent; `again` when it is done but what it captures was not kept.
        case sent(again: Bool)
        /// A write sent again with its key: its outcome in that run is unknown, or (`nil`) a
        /// replay of the log alone had its answer (``WriteRule/againWithKey``).
        case resent(unknownIn: String?)
        /// A write not sent again, for this reason (``WriteRule``).
        case held(String)

        /// The plan's line for it, if it has one.
        func line(task: ExpandedTask, spec: TaskSpec, job: Job) -> String? {
            switch self {
            case .otherShard, .notChosen, .done: return nil
            case .held(let reason): return "\(task.id)\t(not sent: \(reason))"
            case .resent(let run):
                // Where it goes, as a line of a task sent: its save and records too (trial U).
                var line =
                    "\(task.id)\t\(task.request.method) \(task.request.displayURL.absoluteString)"
                if let save = task.save { line += "\t-> \(job.outputDir)/\(save)" }
                line += RunCommand.describeRecords(of: task, job: job)
                let why =
                    run.map { "its write's outcome in run \($0) is unknown" }
                    ?? "a replay of the log alone had its answer, and saved nothing"
                return line
                    + "\t(\(why): sent again with its idempotency key, made once only if the server honours it)"
            case .kept(let count): return ResumePlan.keptLine(task.id, values: count)
            case .sent(let again):
                var request = task.request
                var resumed = ""
                if !spec.hasCaptures,
                    let (page, run, next) = ResumePlan.checkpoint(of: task, job: job)
                {
                    request = next
                    resumed = "\t(goes on from page \(page): its checkpoint, kept by run \(run))"
                }
                var line = "\(task.id)\t\(request.method) \(request.displayURL.absoluteString)"
                if let rule = task.paginate { line += "\t" + RunCommand.describe(rule) }
                line += resumed
                if let save = task.save { line += "\t-> \(job.outputDir)/\(save)" }
                line += RunCommand.describeRecords(of: task, job: job)
                if again {
                    line += "\t(done, sent again: what it captures is needed and was not kept)"
                }
                return line + RunCommand.notes(spec)
            }
        }
    }

    /// Where a paginated task's checkpoint has the resume go on (``ListingCheckpoint``): the
    /// page, the run that kept it and the page's request; `nil` when it starts at page 1 (no
    /// checkpoint, or one made for another first request). The run checks the records it
    /// kept too, and starts at page 1 should they have changed, or be older than their
    /// `merge` file (as here: a plan that said "goes on" for those misled, trial PP).
    static func checkpoint(of task: ExpandedTask, job: Job) -> (Int, String, HTTPRequest)? {
        guard let rule = task.paginate, !task.conditional,
            case .success(let checkpoint)? = ListingCheckpoints(
                outputDir: job.outputDir, job: job.name
            ).read(task: task.id),
            checkpoint.first
                == ListingCheckpoint.fingerprint(of: task.request, records: task.records),
            let (_, request) = try? Paginator.resuming(
                checkpoint.pages, rule: rule, first: task.request)
        else { return nil }
        if let target = task.records, target.rule.write == .merge,
            let records = checkpoint.records
        {
            let store = RecordsStore(outputDir: URL(fileURLWithPath: job.outputDir), job: job.name)
            if store.isOlder(store.root.appendingPathComponent(records.file), than: target.path) {
                return nil
            }
        }
        return (checkpoint.pages.pages + 1, checkpoint.run, request)
    }

    /// Decides what the resume does with `task`, handing its kept values to `feed` when it
    /// takes them instead of sending it.
    static func plan(
        _ task: ExpandedTask, spec: TaskSpec, job: Job, resume: RunHistory, options: RunOptions,
        needed: Set<Int>, resumeNeeded: Set<Int>? = nil, feed: TaskFeed
    ) -> Planned {
        if let shard = options.shard, !shard.runs(taskID: task.id, capturing: spec.hasCaptures) {
            return .otherShard
        }
        // `--task`, as the run chooses: the tasks named, and those that capture what they
        // may need.
        let isChosen = chosen(task.id, options: options)
        if !isChosen, !(spec.hasCaptures && task.specIndex.map(needed.contains) == true) {
            return .notChosen
        }
        let key = FNV1a.taskKey(job: job.name, task: task.id)
        let sending: Planned
        // As the run decides it: a write whose id now sends another task's request is not
        // done by its id's write.
        let swapped =
            !spec.hasCaptures && WriteRule.keying(task, in: job) != nil
            && !options.named.contains(task.id)
            && WriteRule.sentByAnother(task, job: job.name, writes: resume.writes)
        if !resume.done.contains(key) || swapped {
            sending = .sent(again: false)
        } else if !spec.hasCaptures {
            return .done
        } else if let resumeNeeded, let index = task.specIndex, !resumeNeeded.contains(index),
            !options.named.contains(task.id)
        {
            // What it captures, no task not done (and chosen) takes (``ResumeNeeds``): its
            // kept values still make the fan-out children, found done, as in the run, and its
            // line says so. One `--task` names is sent as named (a write held before, named
            // to send it again).
            if let kept = resume.okRuns[key].flatMap({
                KeptCaptures.load(job: job, task: task.id, run: $0)
            }), handOn(kept, of: spec, to: feed) {
                return .kept(values: kept.reduce(0) { $0 + $1.values.count })
            }
            return isChosen ? .done : .notChosen
        } else if let kept = resume.okRuns[key].flatMap({
            KeptCaptures.load(job: job, task: task.id, run: $0)
        }), handOn(kept, of: spec, to: feed) {
            return .kept(values: kept.reduce(0) { $0 + $1.values.count })
        } else {
            sending = .sent(again: true)
        }
        // A write is sent again only as the run's rule says (``WriteRule``).
        guard let keying = WriteRule.keying(task, in: job) else { return sending }
        switch WriteRule.verdict(
            on: task, of: job.name, keying: keying, capturing: spec.hasCaptures,
            writes: resume.writes, named: options.named.contains(task.id),
            choseNone: options.only.isEmpty)
        {
        case .send: return sending
        case .sendWithKey(let run): return .resent(unknownIn: run)
        case .doneByAnswer, .doneAsAnother: return .done
        case .doneInHistory:
            // Held, and counted done as well, as the run says it (on stderr).
            return WriteRule.answeredElsewhere(
                task.id, keying, job: job.name, writes: resume.writes,
                completing: Set(resume.runs)
            ).map(Planned.held) ?? .done
        case .hold(let reason), .changed(let reason): return .held(reason)
        }
    }

    /// The specs whose captures the tasks `--task` chooses may need (none: every spec).
    static func neededProducers(_ job: Job, options: RunOptions) -> Set<Int> {
        options.only.isEmpty
            ? Set(job.tasks.indices)
            : ReplaySelection.neededProducers(
                in: job, ids: [], globs: options.only, on: options.shard)
    }

    /// Whether `--task` (none: every task) chooses the task `id`.
    static func chosen(_ id: String, options: RunOptions) -> Bool {
        options.only.isEmpty || options.only.contains { fnmatch($0, id, 0) == 0 }
    }

    /// The tasks `wanted` names, built as a run builds them: the job's expansion, with the
    /// values earlier runs kept for their done capturing tasks (``KeptCaptures``, the run of
    /// each task's `ok` in `okRuns`) fed in, so a fan-out child is found as `replay --job`
    /// finds it. The children of a producer with no kept values are not found: they come only
    /// when it runs again.
    static func tasksWithKeptCaptures(
        _ job: Job, wanted: Set<String>, okRuns: [UInt64: String], redactor: Redactor
    ) -> [String: ExpandedTask] {
        var found: [String: ExpandedTask] = [:]
        guard !wanted.isEmpty else { return found }
        walkWithKeptCaptures(job, okRuns: okRuns, redactor: redactor) { task, _ in
            if wanted.contains(task.id) { found[task.id] = task }
            return found.count < wanted.count
        }
        return found
    }

    /// Walks the job's tasks as a run finds them, through a feed of its own: each capturing
    /// task that `useKept` allows hands on the values its run kept (``KeptCaptures``, the run
    /// of its `ok` in `okRuns`), so the fan-out children they make are found; one with none
    /// is taken as failed, and its children are not. `visit` sees each task, with whether it
    /// handed kept values on, and returns `false` to stop.
    static func walkWithKeptCaptures(
        _ job: Job, okRuns: [UInt64: String], redactor: Redactor,
        useKept: (ExpandedTask) -> Bool = { _ in true },
        visit: (ExpandedTask, _ handedOn: Bool) -> Bool
    ) {
        let feed = TaskFeed(job: job, cursors: [:], redactor: redactor)
        defer { feed.close() }
        loop: while true {
            switch feed.next() {
            case .task(let task):
                var handedOn = false
                let capturing = task.spec(in: job)?.hasCaptures == true
                if capturing, let spec = task.spec(in: job), useKept(task),
                    let kept = okRuns[FNV1a.taskKey(job: job.name, task: task.id)].flatMap({
                        KeptCaptures.load(job: job, task: task.id, run: $0)
                    })
                {
                    handedOn = handOn(kept, of: spec, to: feed)
                }
                let going = visit(task, handedOn)
                feed.finished(task.specIndex, ok: !capturing || handedOn, id: task.id)
                if !going { break loop }
            case .skipped(let skipped):
                feed.finished(skipped.spec, ok: false, id: skipped.id)
            case .failure(_, let spec, let id):
                feed.finished(spec, ok: false, id: id)
            case .wait, .end:
                break loop
            }
        }
    }

    /// The tasks that capture which a `replay --job` sends though it did not choose them
    /// (``TaskSelection``): what they capture may be what the chosen tasks need, and no earlier
    /// run kept it (a secret capture never is). A capturing fan-out child is found only when
    /// its producer runs, so it is not listed.
    static func capturingTasksSentAgain(
        _ job: Job, chosen: Set<String>, okRuns: [UInt64: String]
    ) -> [ExpandedTask] {
        guard job.tasks.contains(where: \.hasCaptures) else { return [] }
        let needed = ReplaySelection.neededProducers(in: job, ids: Array(chosen), globs: [])
        var again: [ExpandedTask] = []
        for case .success(let task) in TaskExpander(job: job) where !chosen.contains(task.id) {
            guard let spec = task.spec(in: job), spec.hasCaptures,
                let index = task.specIndex, needed.contains(index)
            else { continue }
            let kept = okRuns[FNV1a.taskKey(job: job.name, task: task.id)].flatMap {
                KeptCaptures.load(job: job, task: task.id, run: $0)
            }
            let keptNames = Set(kept?.map(\.capture) ?? [])
            if spec.captures.allSatisfy({ keptNames.contains($0.name) }) { continue }
            again.append(task)
        }
        return again
    }

    /// Hands kept values to the plan's feed; whether every kept capture is still one of the
    /// task's (else the task is sent again, as the run would).
    static func handOn(
        _ kept: [(capture: String, values: [String])], of spec: TaskSpec, to feed: TaskFeed
    ) -> Bool {
        let matched = kept.compactMap { kept in
            spec.captures.first { $0.name == kept.capture }.map { ($0, kept.values) }
        }
        guard matched.count == kept.count else { return false }
        for (rule, values) in matched {
            guard (try? feed.capture(values, for: rule)) != nil else { return false }
        }
        return true
    }
}
