import Courier

/// Which done tasks that capture a resume sends again: only those whose captures a task not
/// done may need. A done login whose token only done tasks take is left as it is (a resume
/// had sent it again every time, its token unused; a rate-limited login felt it).
enum ResumeNeeds {
    /// The specs whose captures the specs with a task not done may need. A spec counts as not
    /// done when one of its ids is not in `done`, or when its ids are not known before the
    /// run (a fan-out, an id that takes a capture).
    static func producers(of job: Job, done: Set<UInt64>) -> Set<Int> {
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
        return ReplaySelection.neededProducers(in: job, specs: undone)
    }
}
