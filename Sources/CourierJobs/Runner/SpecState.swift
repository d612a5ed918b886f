/// Where one task spec of a job stands in its run's ``TaskSchedule``: its phase (docs/
/// architecture.md draws them), and how many of the tasks it handed out have finished.
struct SpecState {
    enum Phase {
        case independent
        case waiting
        case expanding(scalars: [String: String], CombinationIterator)
        case streaming(
            scalars: [String: String], variable: String, capture: String,
            others: [(name: String, source: ForeachSource)], cursor: CaptureValues.Cursor,
            inner: (value: String, combinations: CombinationIterator)?)
        case skipping(reason: String, CombinationIterator?)
        case done
    }

    var phase: Phase
    var emitted = 0
    var finished = 0
    /// The first of its tasks that failed or was skipped.
    var failedTask: String?

    /// Every task handed out, and every one of them over.
    var isComplete: Bool {
        if case .done = phase { finished == emitted } else { false }
    }

    /// A dependent spec that may still hand out tasks.
    var isOpen: Bool {
        switch phase {
        case .independent, .done: false
        default: true
        }
    }
}
