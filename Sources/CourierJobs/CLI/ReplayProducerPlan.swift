/// What a `replay --job --dry-run` knows of the tasks that capture which the replay sends
/// though it did not choose them (``TaskSelection``): sent first, or held as writes answered
/// before (``WriteRule``), in which case what they capture never comes and the tasks that
/// take it are skipped.
struct ReplayProducerPlan {
    /// Sent again, in the job's order.
    private(set) var again: [ExpandedTask] = []
    /// Writes not sent again, and why.
    private(set) var held: [(id: String, reason: String)] = []
    /// For each capture's name, the task that captures it and whether it is held.
    private var producers: [String: (id: String, held: Bool)] = [:]

    /// `chosenTasks`: the chosen tasks as the job builds them: what those capture is captured
    /// again too (`replay --job --all` sends a login it chose before the tasks that take its
    /// token; the plan had refused them, saying the job builds another URL).
    init(
        job: Job, chosen: Set<String>, okRuns: [UInt64: String], writes: WriteHistory?,
        named: Set<String>, chosenTasks: [ExpandedTask] = []
    ) {
        for task in ResumePlan.capturingTasksSentAgain(job, chosen: chosen, okRuns: okRuns) {
            let reason = writes.flatMap {
                WriteRule.held(task, in: job, writes: $0, named: named)
            }
            if let reason { held.append((task.id, reason)) } else { again.append(task) }
            for capture in task.spec(in: job)?.captures ?? [] {
                producers[capture.name] = (task.id, reason != nil)
            }
        }
        for task in chosenTasks {
            for capture in task.spec(in: job)?.captures ?? [] where producers[capture.name] == nil {
                producers[capture.name] = (task.id, false)
            }
        }
    }

    /// Why a chosen task of `spec` is not sent: what it takes is captured by a write not sent
    /// again.
    func heldInput(of spec: TaskSpec) -> String? {
        for name in spec.inputs.sorted() {
            if let producer = producers[name], producer.held {
                return
                    "\(name) is captured by \(producer.id), a write not sent again; naming that task with --task sends it again"
            }
        }
        return nil
    }

    /// The inputs of `spec` captured again before it is sent, when there are any.
    func capturedAgain(_ spec: TaskSpec) -> String? {
        let names = spec.inputs.sorted().filter { producers[$0] != nil }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }
}
