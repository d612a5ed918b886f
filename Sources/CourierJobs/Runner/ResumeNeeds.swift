import Courier

/// Which done tasks that capture a resume sends again: only those whose captures a task not
/// done may need. A done login whose token only done tasks take is left as it is (a resume
/// had sent it again every time, its token unused; a rate-limited login felt it).
enum ResumeNeeds {
    /// The specs whose captures the specs with a task not done may need. A spec counts as not
    /// done when one of its ids is not in the history's done tasks, or when its ids are not
    /// known before the run (a fan-out, an id that takes a capture). A producer whose kept
    /// values stand in for it (``KeptCaptures``) is needed, but not sent, so what it takes is
    /// not needed for it: a listing whose ids were kept needs no login's token.
    static func producers(of job: Job, history: RunHistory) -> Set<Int> {
        ReplaySelection.neededProducers(
            in: job, specs: undoneSpecs(of: job, done: history.done),
            standsIn: { keptStandsIn(for: $0, job: job, history: history) })
    }

    private static func undoneSpecs(of job: Job, done: Set<UInt64>) -> Set<Int> {
        var undone = Set<Int>()
        for (index, spec) in job.tasks.enumerated() {
            let id = Template(spec.id)
            guard spec.captureSource == nil,
                Set(id.variables).isSubset(of: spec.foreach.map(\.name))
            else {
                undone.insert(index)
                continue
            }
            for bindings in IteratorSequence(CombinationIterator(spec.foreach, zip: spec.zip))
            where !done.contains(FNV1a.taskKey(job: job.name, task: id.render(bindings))) {
                undone.insert(index)
                break
            }
        }
        return undone
    }

    /// Whether `spec` is one task, done, whose run kept every value it captures.
    private static func keptStandsIn(for spec: TaskSpec, job: Job, history: RunHistory) -> Bool {
        guard spec.foreach.isEmpty, Template(spec.id).variables.isEmpty,
            let run = history.okRuns[FNV1a.taskKey(job: job.name, task: spec.id)],
            let kept = KeptCaptures.load(job: job, task: spec.id, run: run)
        else { return false }
        let names = Set(kept.map(\.capture))
        return spec.captures.allSatisfy { names.contains($0.name) }
    }
}
