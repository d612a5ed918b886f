import Courier

/// A dependent spec's start: where its `{name}` inputs stand, and the phase they put it in.
extension TaskSchedule {
    /// Moves a waiting spec on once its inputs are known: expanding (or streaming a fan-out)
    /// with their values, or skipping when one cannot be had; `false` while one is not known.
    mutating func start(_ index: Int) -> Bool {
        let spec = job.tasks[index]
        let scalars: [String: String]
        switch inputs(of: spec) {
        case .waiting: return false
        case .failed(let reason, let byJob):
            if byJob { byJobSkips.insert(index) }
            guard spec.captureSource != nil,
                Set(Template(spec.id).variables).isSubset(of: spec.foreach.map(\.name))
            else {
                beginSkipping(index, reason: reason)
                return true
            }
            // A fan-out still streams its values: each child is skipped under its own id.
            fanOutSkips[index] = reason
            scalars = [:]
        case .ready(let values): scalars = values
        }
        if let source = spec.captureSource {
            specs[index].phase = .streaming(
                scalars: scalars, variable: source.variable, capture: source.capture,
                others: spec.foreach.filter { $0.name != source.variable },
                cursor: CaptureValues.Cursor(), inner: nil)
        } else {
            specs[index].phase = .expanding(
                scalars: scalars, CombinationIterator(spec.foreach, zip: spec.zip))
        }
        return true
    }

    /// Where a dependent spec's `{name}` inputs stand.
    enum Inputs {
        /// A task that captures one has not finished.
        case waiting
        /// One cannot be had: its task failed, or it has no value, or several.
        case failed(String, byJob: Bool = false)
        /// Each has its one value.
        case ready([String: String])
    }

    func inputs(of spec: TaskSpec) -> Inputs {
        var scalars: [String: String] = [:]
        for name in spec.inputs.sorted() {
            let status = status(of: name)
            guard status.complete else { return .waiting }
            if let failed = status.failedTask { return .failed(failureReason(name, failed)) }
            let values = captures[name]!
            guard values.count > 0 else {
                return .failed(
                    "capture \"\(name)\" of \(job.tasks[producer[name]!].path) found no value")
            }
            guard !values.hasDifferentValues else {
                return .failed(
                    "capture \"\(name)\" found different values, and {\(name)} takes one (fan out over it with foreach instead)",
                    byJob: true)
            }
            scalars[name] = values.first
        }
        return .ready(scalars)
    }

    func failureReason(_ capture: String, _ failedTask: String) -> String {
        let producerPath = job.tasks[producer[capture]!].path
        return
            "input task \(failedTask) (\(producerPath), which captures \"\(capture)\") did not succeed"
    }
}
