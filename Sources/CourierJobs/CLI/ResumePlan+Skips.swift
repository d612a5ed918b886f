import Courier

/// What a resume's plan says of a task the feed skips because what it takes was not captured:
/// done, held, or sent once its producer captures again; as the run settles it.
extension ResumePlan {
    /// What the plan says of a task the feed skips (what it takes is not captured yet).
    enum SkippedPlan {
        /// Done, and stays so though what it takes is not captured again; `line`: what it
        /// says, when its kept values went on.
        case done(line: String? = nil)
        /// Its line; `sends`: it is sent once its producer, sent again, captures its inputs;
        /// `held`: a write the history holds (``WriteRule``).
        case line(String?, sends: Bool, held: Bool = false)
    }

    /// The plan's figures.
    struct Tally {
        var sent = 0
        var done = 0
        var held = 0

        /// Counts `plan`; the line it prints, if it has one.
        mutating func count(_ plan: SkippedPlan) -> String? {
            switch plan {
            case .done(let line):
                done += 1
                return line
            case .line(let line, let sends, let isHeld):
                if sends { sent += 1 }
                if isHeld { held += 1 }
                return line
            }
        }
    }

    /// The line of a done task whose kept values stand in for it.
    static func keptLine(_ id: String, values count: Int) -> String {
        "\(id)\t(not sent: done by an earlier run, which kept its \(count) captured value\(count == 1 ? "" : "s"))"
    }

    /// A done task skipped now (its input was not captured again): its kept values still go
    /// to the tasks that take them, as in the run. Its line when they did.
    private static func handOnKept(
        of skipped: TaskFeed.SkippedTask, job: Job, resume: RunHistory, to feed: TaskFeed
    ) -> String? {
        let spec = job.tasks[skipped.spec]
        guard spec.hasCaptures,
            let kept = resume.okRuns[FNV1a.taskKey(job: job.name, task: skipped.id)].flatMap({
                KeptCaptures.load(job: job, task: skipped.id, run: $0)
            }), handOn(kept, of: spec, to: feed)
        else { return nil }
        return keptLine(skipped.id, values: kept.reduce(0) { $0 + $1.values.count })
    }

    /// What the plan says of a skip, `nil` when it is not the plan's (another shard's, or one
    /// `--task` did not choose). A done task's kept values go on to the tasks that take
    /// them, chosen or not, as in the run.
    static func settle(
        _ skipped: TaskFeed.SkippedTask, job: Job, resume: RunHistory, options: RunOptions,
        held: Set<Int>, feed: TaskFeed
    ) -> SkippedPlan? {
        guard settles(skipped, job: job, options: options) else { return nil }
        guard chosen(skipped.id, options: options) else {
            // Listed, not counted: the run does not count it.
            let line = handOnKept(of: skipped, job: job, resume: resume, to: feed)
            return line.map { .line($0, sends: false) }
        }
        let planned = skippedPlan(
            skipped, job: job, resume: resume, held: held, named: options.named)
        if case .done = planned {
            return .done(line: handOnKept(of: skipped, job: job, resume: resume, to: feed))
        }
        return planned
    }

    /// Whether this shard (every run that is not one) settles the skip, as the run decides it
    /// (a trial's shard plan listed another shard's).
    private static func settles(
        _ skipped: TaskFeed.SkippedTask, job: Job, options: RunOptions
    ) -> Bool {
        options.shard?.settlesSkip(of: skipped.id, spec: job.tasks[skipped.spec]) != false
    }

    static func skippedPlan(
        _ skipped: TaskFeed.SkippedTask, job: Job, resume: RunHistory, held: Set<Int>,
        named: Set<String> = []
    ) -> SkippedPlan {
        let key = FNV1a.taskKey(job: job.name, task: skipped.id)
        if resume.done.contains(key) { return .done() }
        // A write the history holds is held, as the run tells it, whatever it takes.
        if let reason = WriteRule.held(
            skipped.id, spec: job.tasks[skipped.spec], job: job.name, writes: resume.writes,
            named: named)
        {
            return .line("\(skipped.id)\t(not sent: \(reason))", sends: false, held: true)
        }
        let names = job.tasks[skipped.spec].inputs.sorted()
        let inputs = names.joined(separator: ", ")
        let heldBy = names.compactMap { name in
            job.tasks.firstIndex { $0.captures.contains { $0.name == name } }
        }.first { held.contains($0) }
        if let heldBy {
            // Its producer is a write not sent again: the run skips it.
            return .line(
                "\(skipped.id)\t(not sent: \(inputs) is captured by \(job.tasks[heldBy].id), a write not sent again; naming that task with --task sends it again)",
                sends: false)
        }
        return .line("\(skipped.id)\t(sent once \(inputs) is captured again)", sends: true)
    }
}
