import Courier
import Foundation

/// Where a run's tasks come from when tasks hand values to one another (`capture`).
///
/// Tasks that wait for nothing are expanded in file order, as without captures. A task that
/// uses a capture as `{name}` starts once the capturing task has finished, all its pages and
/// expansions; a task that fans out over a capture (`foreach: {"id": {"capture": "ids"}}`)
/// starts a child for each value as soon as it arrives, while the parent is still paging. When
/// an input task fails, its dependants are skipped.
///
/// Every task handed out must be reported back once with ``finished(_:ok:)``: that is how the
/// feed knows a capture is complete.
final class TaskFeed: Sendable {
    /// What the runner does next.
    enum Item {
        case task(ExpandedTask)
        /// A task that could not be built (its id, as far as it renders); it counts as failed.
        case failure(JobFileError, spec: Int, id: String)
        /// A task that will not run because an input task failed.
        case skipped(SkippedTask)
        /// Nothing to start until a running task captures something or finishes; the value is
        /// the change count to wait past.
        case wait(Int)
        case end

        /// The job task (index in `tasks`) an item belongs to.
        var spec: Int? {
            switch self {
            case .task(let task): task.specIndex
            case .failure(_, let spec, _): spec
            case .skipped(let skipped): skipped.spec
            case .wait, .end: nil
            }
        }
    }

    /// A task left out because what it needed never came.
    struct SkippedTask: Sendable {
        /// The task's id, or its id template when the ids depend on the missing values.
        var id: String
        var spec: Int
        var reason: String
    }

    private let state: Locked<State>
    private let redactor: Redactor
    /// Whether any task waits for another's captures: without, nothing reads what
    /// ``finished(_:ok:id:)`` records, and each task's end need not take the lock that every
    /// task's start takes.
    private let hasDependents: Bool

    /// - Parameters:
    ///   - redactor: learns each secret capture before any line that could hold it is written.
    ///   - memoryLimit: captured values kept in memory per capture; the rest go to a file.
    init(job: Job, redactor: Redactor, memoryLimit: Int = 100_000) {
        state = Locked(State(job: job, memoryLimit: memoryLimit))
        self.redactor = redactor
        hasDependents = job.tasks.contains(where: \.isDependent)
    }

    /// How many times a capture grew or a task finished: a waiter compares it.
    var changes: Int { state.withLock { $0.changes } }

    /// Returns once ``changes`` has moved past `count` (woken by the change itself, not by
    /// polling), or a quarter of a second has passed: the caller then looks again, and checks
    /// `stop` (a stopping run wakes no waiter of its own).
    func waitForChange(after count: Int, stop: @Sendable () -> Bool) async {
        guard !stop() else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ticket = state.withLock { state -> UInt64? in
                guard state.changes == count else { return nil }
                state.nextWaiter &+= 1
                state.waiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let ticket else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(250)) {
                [state] in
                state.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume()
            }
        }
    }

    /// The next thing to do.
    func next() -> Item {
        let (item, woken) = state.withLock { state in
            let before = state.changes
            let item = state.next()
            return (item, state.changes == before ? [] : state.takeWaiters())
        }
        for waiter in woken { waiter.resume() }
        return item
    }

    /// Records the values one response of a task gave; secret ones are redacted from here on.
    func capture(_ values: [String], for rule: CaptureRule) throws {
        if rule.secret { for value in values { redactor.learn(value) } }
        let woken = try state.withLock { state in
            try state.append(values, to: rule.name)
            state.changes += 1
            return state.takeWaiters()
        }
        for waiter in woken { waiter.resume() }
    }

    /// The value tasks take for `{name}` now: the capture's, or the last renewal's
    /// (``renew(_:for:)``).
    func currentValue(of name: String) -> String? {
        state.withLock { $0.renewed[name] ?? $0.captures[name]?.first }
    }

    /// A fresh value for a capture, from its task sent again because a token was rejected:
    /// later tasks take it in place of the first. Secret ones are redacted from here on.
    func renew(_ values: [String], for rule: CaptureRule) {
        guard let value = values.first else { return }
        if rule.secret { for value in values { redactor.learn(value) } }
        state.withLock { $0.renewed[rule.name] = value }
    }

    /// The task that captures `name`, built again to be re-sent (a login whose token was
    /// rejected); `nil` when it cannot be built.
    func producerTask(of name: String) -> ExpandedTask? {
        state.withLock { state in
            guard let index = state.producer[name] else { return nil }
            return try? TaskBuilder.build(
                state.job.tasks[index], index: index, bindings: [:], job: state.job,
                base: state.base
            ).get()
        }
    }

    /// A task handed out by ``next()`` is over (run, already done, or skipped).
    func finished(_ spec: Int?, ok: Bool, id: String) {
        guard hasDependents, let spec else { return }
        let woken = state.withLock { state in
            state.specs[spec].finished += 1
            if !ok, state.specs[spec].failedTask == nil { state.specs[spec].failedTask = id }
            state.changes += 1
            return state.takeWaiters()
        }
        for waiter in woken { waiter.resume() }
    }

    /// Frees the captured values' temporary files.
    func close() {
        state.withLock { state in
            for values in state.captures.values { values.release() }
        }
    }

    // MARK: - State

    private struct State {
        let job: Job
        let base: URLBuilder.Base?
        var changes = 0
        /// The scheduler waiting for a change (``waitForChange(after:stop:)``), by ticket.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0

        /// The waiters to wake, now that something changed (resumed outside the lock).
        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        var specs: [SpecState]
        /// Values by capture name.
        var captures: [String: CaptureValues] = [:]
        /// Renewed tokens by capture name: they replace the captured value.
        var renewed: [String: String] = [:]
        /// The spec that captures each name.
        var producer: [String: Int] = [:]
        /// Keys of the ids each fan-out spec has handed out: a value captured twice (`a, a,
        /// b`) is one child, never the same request sent twice under one id.
        var fannedOut: [Int: Set<UInt64>] = [:]
        /// Specs that wait for captures (none in most jobs: then a task costs no scan).
        let dependents: [Int]
        /// Specs that wait for nothing, in file order, and the one being expanded.
        var independent: [Int]
        var current: (spec: Int, combinations: CombinationIterator)?

        init(job: Job, memoryLimit: Int) {
            self.job = job
            base = job.baseURL.flatMap(URLBuilder.Base.init)
            specs = job.tasks.map { SpecState(phase: $0.isDependent ? .waiting : .independent) }
            dependents = job.tasks.indices.filter { job.tasks[$0].isDependent }
            independent = job.tasks.indices.filter { !job.tasks[$0].isDependent }
            for (index, spec) in job.tasks.enumerated() {
                for rule in spec.captures {
                    producer[rule.name] = index
                    captures[rule.name] = CaptureValues(memoryLimit: memoryLimit)
                }
            }
        }

        mutating func append(_ values: [String], to name: String) throws {
            for value in values { try captures[name]?.append(value) }
        }

        /// Whether every task of the spec that captures `name` has finished, and if one failed,
        /// which.
        func status(of name: String) -> (complete: Bool, failedTask: String?) {
            guard let index = producer[name] else { return (true, nil) }
            let spec = specs[index]
            return (spec.isComplete, spec.failedTask)
        }

        mutating func next() -> Item {
            while true {
                // Dependants first: their values are waiting in memory, and children that
                // start early keep the run's memory flat.
                var waiting = false
                for index in dependents where specs[index].isOpen {
                    if let item = advance(index) { return item }
                    if specs[index].isOpen { waiting = true }
                }
                if current == nil {
                    guard !independent.isEmpty else { return waiting ? .wait(changes) : .end }
                    let index = independent.removeFirst()
                    let spec = job.tasks[index]
                    current = (index, CombinationIterator(spec.foreach, zip: spec.zip))
                }
                if let bindings = current!.combinations.next() {
                    if let item = build(current!.spec, bindings: bindings) { return item }
                    continue
                }
                // A spec that has finished expanding may complete a capture someone waits for:
                // look at the dependants again.
                endExpansion(current!.spec)
                current = nil
            }
        }

        /// One step of a dependent spec: a task, a skip, or `nil` when it must wait (or just
        /// ended).
        private mutating func advance(_ index: Int) -> Item? {
            let spec = job.tasks[index]
            while true {
                switch specs[index].phase {
                case .independent, .done:
                    return nil
                case .waiting:
                    var scalars: [String: String] = [:]
                    for name in spec.inputs.sorted() {
                        let status = status(of: name)
                        guard status.complete else { return nil }
                        if let failed = status.failedTask {
                            return skipAll(index, reason: failureReason(name, failed))
                        }
                        let values = captures[name]!
                        guard values.count > 0 else {
                            return skipAll(
                                index,
                                reason:
                                    "capture \"\(name)\" of \(job.tasks[producer[name]!].path) found no value"
                            )
                        }
                        guard !values.hasDifferentValues else {
                            return skipAll(
                                index,
                                reason:
                                    "capture \"\(name)\" found different values, and {\(name)} takes one (fan out over it with foreach instead)"
                            )
                        }
                        scalars[name] = values.first
                    }
                    if let source = spec.captureSource {
                        let others = spec.foreach.filter { $0.name != source.variable }
                        specs[index].phase = .streaming(
                            scalars: scalars, variable: source.variable, capture: source.capture,
                            others: others, cursor: CaptureValues.Cursor(), inner: nil)
                    } else {
                        specs[index].phase = .expanding(
                            scalars: scalars, CombinationIterator(spec.foreach, zip: spec.zip))
                    }
                case .expanding(let scalars, var combinations):
                    // Released from the enum first, so that advancing does not copy it.
                    specs[index].phase = .done
                    let bindings = combinations.next()
                    specs[index].phase = .expanding(scalars: scalars, combinations)
                    guard let bindings else {
                        endExpansion(index)
                        return nil
                    }
                    if let item = build(
                        index, bindings: bindings.merging(scalars) { own, _ in own })
                    {
                        return item
                    }
                    continue
                case .streaming(
                    let scalars, let variable, let capture, let others, var cursor, var inner):
                    // Released from the enum first, so that advancing does not copy the
                    // iterator; every way out below stores the phase again.
                    specs[index].phase = .done
                    if var current = inner {
                        inner = nil
                        if let bindings = current.combinations.next() {
                            specs[index].phase = .streaming(
                                scalars: scalars, variable: variable, capture: capture,
                                others: others, cursor: cursor, inner: current)
                            var all = bindings.merging(scalars) { own, _ in own }
                            all[variable] = current.value
                            // `nil`: a value captured before; its child was handed out.
                            if let item = build(index, bindings: all) { return item }
                            continue
                        }
                    }
                    if let value = captures[capture]!.next(&cursor) {
                        specs[index].phase = .streaming(
                            scalars: scalars, variable: variable, capture: capture, others: others,
                            cursor: cursor, inner: (value, CombinationIterator(others)))
                        continue
                    }
                    let status = status(of: capture)
                    guard status.complete else {
                        specs[index].phase = .streaming(
                            scalars: scalars, variable: variable, capture: capture, others: others,
                            cursor: cursor, inner: nil)
                        return nil
                    }
                    endExpansion(index)
                    if let failed = status.failedTask {
                        // The values that came were used; the rest are unknown.
                        let item = SkippedTask(
                            id: spec.id, spec: index,
                            reason: failureReason(capture, failed)
                                + "; its later values are unknown")
                        specs[index].emitted += 1
                        return .skipped(item)
                    }
                    return nil
                case .skipping(let reason, var combinations):
                    // One line per task whose id is known without the missing values; one for
                    // the whole spec otherwise.
                    if combinations != nil {
                        let bindings = combinations!.next()
                        specs[index].phase = .skipping(reason: reason, combinations)
                        guard let bindings else {
                            endExpansion(index)
                            return nil
                        }
                        specs[index].emitted += 1
                        return .skipped(
                            SkippedTask(
                                id: Template(spec.id).render(bindings), spec: index, reason: reason)
                        )
                    }
                    endExpansion(index)
                    specs[index].emitted += 1
                    return .skipped(SkippedTask(id: spec.id, spec: index, reason: reason))
                }
            }
        }

        private func failureReason(_ capture: String, _ failedTask: String) -> String {
            let producerPath = job.tasks[producer[capture]!].path
            return
                "input task \(failedTask) (\(producerPath), which captures \"\(capture)\") did not succeed"
        }

        /// Marks a dependent spec skipped, and returns its first skip.
        private mutating func skipAll(_ index: Int, reason: String) -> Item? {
            let spec = job.tasks[index]
            let idNeedsCaptures = Template(spec.id).variables.contains { name in
                !spec.foreach.contains { $0.name == name }
            }
            let enumerable = spec.captureSource == nil && !idNeedsCaptures
            specs[index].phase = .skipping(
                reason: reason,
                enumerable ? CombinationIterator(spec.foreach, zip: spec.zip) : nil)
            return advance(index)
        }

        /// The spec has handed out all its tasks (it is complete once they have finished).
        private mutating func endExpansion(_ index: Int) {
            specs[index].phase = .done
            changes += 1
        }

        private mutating func build(_ index: Int, bindings: [String: String]) -> Item? {
            let spec = job.tasks[index]
            if spec.captureSource != nil {
                let id = (spec.compiled ?? CompiledTemplates(spec)).id.render(bindings)
                guard
                    fannedOut[index, default: []].insert(FNV1a.taskKey(job: job.name, task: id))
                        .inserted
                else { return nil }
            }
            specs[index].emitted += 1
            switch TaskBuilder.build(spec, index: index, bindings: bindings, job: job, base: base)
            {
            case .success(var task):
                if spec.refreshableToken != nil { task.authBindings = bindings }
                return .task(task)
            case .failure(let error):
                let id = (spec.compiled ?? CompiledTemplates(spec)).id.render(bindings)
                return .failure(error, spec: index, id: id)
            }
        }
    }

    private struct SpecState {
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
}
