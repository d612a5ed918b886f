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
    static func producers(of job: Job, history: RunHistory) -> Set<Int> {
        ReplaySelection.neededProducers(
            in: job, specs: undoneSpecs(of: job, history: history),
            standsIn: { kept(by: $0, job: job, history: history) != nil })
    }

    private static func undoneSpecs(of job: Job, history: RunHistory) -> Set<Int> {
        var undone = Set<Int>()
        for (index, spec) in job.tasks.enumerated() {
            let id = Template(spec.id)
            if let source = spec.captureSource {
                if !childrenDone(spec, source: source, id: id, job: job, history: history) {
                    undone.insert(index)
                }
                continue
            }
            guard Set(id.variables).isSubset(of: spec.foreach.map(\.name)) else {
                undone.insert(index)
                continue
            }
            for bindings in IteratorSequence(CombinationIterator(spec.foreach, zip: spec.zip))
            where !history.done.contains(FNV1a.taskKey(job: job.name, task: id.render(bindings))) {
                undone.insert(index)
                break
            }
        }
        return undone
    }

    /// Whether every child of the fan-out `spec` is done: its ids are those the resume builds,
    /// from the values its producer's run kept (a trial saw a done login sent again on every
    /// resume for children that were all done). `false` when they cannot be known so.
    private static func childrenDone(
        _ spec: TaskSpec, source: (variable: String, capture: String), id: Template, job: Job,
        history: RunHistory
    ) -> Bool {
        guard spec.foreach.count == 1, Set(id.variables).isSubset(of: [source.variable]),
            let producer = job.tasks.first(where: {
                $0.captures.contains { $0.name == source.capture }
            }),
            let values = kept(by: producer, job: job, history: history)?
                .first(where: { $0.capture == source.capture })?.values
        else { return false }
        return values.allSatisfy {
            history.done.contains(
                FNV1a.taskKey(job: job.name, task: id.render([source.variable: $0])))
        }
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
