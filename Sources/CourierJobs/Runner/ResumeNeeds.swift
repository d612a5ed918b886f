import Courier

/// Which done tasks that capture a resume sends again: only those whose captures a task not
/// done may need. A done login whose token only done tasks take is left as it is (a resume
/// had sent it again every time, its token unused; a rate-limited login felt it).
enum ResumeNeeds {
    /// The specs whose captures the specs with a task not done may need. A spec counts as not
    /// done when one of its ids is not in the history's done tasks, or when its ids are not
    /// known before the run (an id that takes a capture; a fan-out, unless its producer's kept
    /// values name every child, each done). A producer whose kept values stand in for it
    /// (``KeptCaptures``) is needed, but not sent, so what it takes is not needed for it: a
    /// listing whose ids were kept needs no login's token.
    ///
    /// `choosing`: what a `--resume --task` run chose; a task it does not choose is not sent,
    /// so what that takes is not needed (a trial's `--resume --task 'user-*'`, every child
    /// done, sent the login every time). So with `shard`: another shard's task is not this
    /// run's (a trial's shard resume logged in on every run for two other shards' children),
    /// and with a write the history holds (``WriteRule``; `named`: the ids named, sent as
    /// asked): it is not sent.
    static func producers(
        of job: Job, history: RunHistory, choosing chosen: ReplaySelection? = nil,
        shard: Shard? = nil, named: Set<String> = []
    ) -> Set<Int> {
        var undone = undoneSpecs(of: job, history: history) { id, spec in
            (chosen?.selects(id: id) ?? true)
                && (shard?.runs(taskID: id, capturing: spec.hasCaptures) ?? true)
                && WriteRule.held(
                    id, spec: spec, job: job.name, writes: history.writes, named: named) == nil
        }
        if let chosen { undone.formIntersection(chosen.selectedSpecs(in: job, on: shard)) }
        return ReplaySelection.neededProducers(
            in: job, specs: undone, standsIn: { kept(by: $0, job: job, history: history) != nil })
    }

    /// The specs with a task not done among those `chooses` admits.
    private static func undoneSpecs(
        of job: Job, history: RunHistory, chooses: (String, TaskSpec) -> Bool
    ) -> Set<Int> {
        var specs = Set<Int>()
        for (index, spec) in job.tasks.enumerated() {
            func undone(_ id: String) -> Bool {
                chooses(id, spec) && !history.done.contains(FNV1a.taskKey(job: job.name, task: id))
            }
            let id = Template(spec.id)
            if let source = spec.captureSource {
                if !childrenDone(spec, source: source, id: id, job: job, history: history, undone) {
                    specs.insert(index)
                }
                continue
            }
            guard Set(id.variables).isSubset(of: spec.foreach.map(\.name)) else {
                specs.insert(index)
                continue
            }
            for bindings in IteratorSequence(CombinationIterator(spec.foreach, zip: spec.zip))
            where undone(id.render(bindings)) {
                specs.insert(index)
                break
            }
        }
        return specs
    }

    /// Whether every child of the fan-out `spec` is done: its ids are those the resume builds,
    /// from the values its producer's run kept (a trial saw a done login sent again on every
    /// resume for children that were all done). `false` when they cannot be known so.
    private static func childrenDone(
        _ spec: TaskSpec, source: (variable: String, capture: String), id: Template, job: Job,
        history: RunHistory, _ undone: (String) -> Bool
    ) -> Bool {
        guard spec.foreach.count == 1, Set(id.variables).isSubset(of: [source.variable]),
            let producer = job.tasks.first(where: {
                $0.captures.contains { $0.name == source.capture }
            }),
            let values = kept(by: producer, job: job, history: history)?
                .first(where: { $0.capture == source.capture })?.values
        else { return false }
        return !values.contains { undone(id.render([source.variable: $0])) }
    }

    /// What `spec` kept, when it is one task, done, whose run kept every value it captures.
    private static func kept(by spec: TaskSpec, job: Job, history: RunHistory)
        -> [(capture: String, values: [String])]?
    {
        guard spec.foreach.isEmpty, Template(spec.id).variables.isEmpty,
            let run = history.okRuns[FNV1a.taskKey(job: job.name, task: spec.id)],
            let kept = KeptCaptures.load(job: job, task: spec.id, run: run)
        else { return nil }
        let names = Set(kept.map(\.capture))
        return spec.captures.allSatisfy { names.contains($0.name) } ? kept : nil
    }
}
