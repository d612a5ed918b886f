import Courier
import Foundation

/// Expands a job's tasks lazily, in file order: `foreach` values are produced one combination
/// at a time (a `lines` file is streamed, re-read for each outer value of a product).
struct TaskExpander: Sequence {
    let job: Job
    /// The `since` tasks' kept cursors, by task id (none: every one from its start).
    let cursors: [String: String]

    init(job: Job, cursors: [String: String] = [:]) {
        self.job = job
        self.cursors = cursors
    }

    func makeIterator() -> Iterator { Iterator(job: job, cursors: cursors) }

    /// Produces expanded tasks or the error that one of them carries.
    struct Iterator: IteratorProtocol {
        private let job: Job
        private var specIndex = 0
        private var combinations: CombinationIterator?
        private let base: URLBuilder.Base?
        private let cursors: [String: String]

        init(job: Job, cursors: [String: String]) {
            self.cursors = cursors
            self.job = job
            base = job.baseURL.flatMap(URLBuilder.Base.init)
        }

        mutating func next() -> Result<ExpandedTask, JobFileError>? {
            while specIndex < job.tasks.count {
                let spec = job.tasks[specIndex]
                if combinations == nil {
                    combinations = CombinationIterator(spec.foreach, zip: spec.zip)
                }
                if let bindings = combinations?.next() {
                    return TaskBuilder.build(
                        spec, index: specIndex, bindings: bindings, job: job, base: base,
                        cursors: cursors)
                }
                combinations = nil
                specIndex += 1
            }
            return nil
        }
    }
}
