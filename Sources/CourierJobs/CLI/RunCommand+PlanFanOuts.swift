import Courier
import Foundation

/// `courier run --task GLOB --dry-run` over a fan-out whose producer is not chosen and whose
/// values an earlier run kept: the run does not send the producer, its kept values make the
/// children (``TaskSelection``), so the plan lists the children the globs choose, one by one,
/// as the run will send them. (A trial's plan said "0 tasks" where the run then sent one.)
extension RunCommand {
    /// The chosen children of each fan-out spec (by index) that kept values make (none, when
    /// the globs choose none of them); a fan-out whose producer would be sent is not in it:
    /// its children come only as it runs.
    static func keptFanOutChildren(
        _ job: Job, options: RunOptions, redactor: Redactor
    ) -> [Int: [ExpandedTask]] {
        guard !options.only.isEmpty, let history = options.history,
            job.tasks.contains(where: { $0.captureSource != nil })
        else { return [:] }
        var children: [Int: [ExpandedTask]] = [:]
        // Only a producer the run takes kept values for instead of sending: one not chosen
        // (``keptInstead(_:capturing:job:options:)``).
        ResumePlan.walkWithKeptCaptures(
            job, okRuns: history.okRuns, redactor: redactor,
            useKept: { !ResumePlan.chosen($0.id, options: options) }
        ) { task, handedOn in
            guard let index = task.specIndex, let spec = task.spec(in: job) else { return true }
            if handedOn {
                // Its fan-outs' children are known now, even should the globs choose none.
                let names = Set(spec.captures.map(\.name))
                for (fanOut, other) in job.tasks.enumerated()
                where other.captureSource.map({ names.contains($0.capture) }) == true {
                    children[fanOut, default: []] += []
                }
            }
            if spec.captureSource != nil, ResumePlan.chosen(task.id, options: options),
                options.shard?.runs(taskID: task.id, capturing: spec.hasCaptures) ?? true
            {
                children[index, default: []].append(task)
            }
            return true
        }
        return children
    }
}
