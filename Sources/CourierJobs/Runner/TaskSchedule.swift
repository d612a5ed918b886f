import Courier
import Foundation

/// The decisions of a ``TaskFeed`` as a value: which task comes next, when a task waiting for
/// a capture may start, one fan-out child per captured value (repeats dropped), and the skips
/// when an input failed. The feed guards it with a lock and wakes the scheduler; the value
/// itself is unit-tested (`TaskScheduleTests`).
struct TaskSchedule {
    typealias Item = TaskFeed.Item
    typealias SkippedTask = TaskFeed.SkippedTask

    let job: Job
    let base: URLBuilder.Base?
    /// The `since` tasks' kept cursors, by task id, as the run found them.
    let cursors: [String: String]
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
    var fannedOut: [Int: CompactKeySet] = [:]
    /// Fan-out specs whose `{name}` input cannot be had, by why: each child whose value comes
    /// is skipped under its own id (a resume finds the done ones done), not the whole spec
    /// under its template.
    var fanOutSkips: [Int: String] = [:]
    /// Specs skipped by the job's own rules (``TaskFeed/SkippedTask/byJob``).
    var byJobSkips: Set<Int> = []
    /// Specs that wait for captures (none in most jobs: then a task costs no scan).
    let dependents: [Int]
    /// Specs that wait for nothing, in file order, and the one being expanded.
    var independent: [Int]
    var current: (spec: Int, combinations: CombinationIterator)?

    init(job: Job, cursors: [String: String] = [:], memoryLimit: Int) {
        self.job = job
        self.cursors = cursors
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

    /// Values a task captured for `name`: fan-out children may follow.
    mutating func captured(_ values: [String], for name: String) throws {
        try append(values, to: name)
        changes += 1
    }

    /// A task handed out by ``next()`` is over: when the spec's last one is, what it captures
    /// is complete (or, if one failed, its dependants are skipped).
    mutating func finished(spec: Int, ok: Bool, id: String) {
        specs[spec].finished += 1
        if !ok, specs[spec].failedTask == nil { specs[spec].failedTask = id }
        changes += 1
    }

    /// Whether a fan-out can still find children: it has not handed out its last one (its
    /// values' task has not finished, or its children are still being handed out: each is
    /// counted in the progress line's total only then; trial UUU saw `[9/11] 81%  ETA 0s`
    /// with 26 children to come).
    var isDiscovering: Bool {
        job.tasks.indices.contains { index in
            job.tasks[index].captureSource != nil && specs[index].isOpen
        }
    }

    /// Whether every task of the spec that captures `name` has finished, and if one failed,
    /// which.
    func status(of name: String) -> (complete: Bool, failedTask: String?) {
        guard let index = producer[name] else { return (true, nil) }
        let spec = specs[index]
        return (spec.isComplete, spec.failedTask)
    }

    /// What comes next: an item, or a task to build (``Next``).
    enum Next {
        case item(Item)
        /// Task `spec` with `bindings`, counted as handed out: the feed builds it outside its
        /// lock, so that the slots of the other curl loop need not wait for the build.
        case build(spec: Int, bindings: [String: String])
    }

    /// The next item, its task built.
    mutating func next() -> Item {
        switch nextStep() {
        case .item(let item): return item
        case .build(let spec, let bindings):
            return Self.built(spec, bindings: bindings, job: job, base: base, cursors: cursors)
        }
    }

    /// Task `index` built with `bindings`: ``Next/build(spec:bindings:)``, done.
    static func built(
        _ index: Int, bindings: [String: String], job: Job, base: URLBuilder.Base?,
        cursors: [String: String]
    ) -> Item {
        // The spec read in place, never bound to a local: copies of it (every field retained
        // and released) were 1.3 % of a 100,000-task run's CPU.
        switch TaskBuilder.build(
            job.tasks[index], index: index, bindings: bindings, job: job, base: base,
            cursors: cursors)
        {
        case .success(var task):
            if job.tasks[index].refreshableToken != nil { task.authBindings = bindings }
            return .task(task)
        case .failure(let error):
            let id = TaskBuilder.id(of: job.tasks[index], bindings: bindings)
            return .failure(
                error, spec: index,
                id: SecretInTaskID.redacted(id, spec: job.tasks[index], job: job))
        }
    }

    mutating func nextStep() -> Next {
        while true {
            // Dependants first: their values are waiting in memory, and children that
            // start early keep the run's memory flat.
            var waiting = false
            for index in dependents where specs[index].isOpen {
                if let item = advance(index) { return item }
                if specs[index].isOpen { waiting = true }
            }
            if current == nil {
                guard !independent.isEmpty else {
                    return .item(waiting ? .wait(changes) : .end)
                }
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
    private mutating func advance(_ index: Int) -> Next? {
        let spec = job.tasks[index]
        while true {
            switch specs[index].phase {
            case .independent, .done:
                return nil
            case .waiting:
                // Its inputs, once every one is known: expanding, streaming or skipping.
                guard start(index) else { return nil }
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
                // The iterator is moved, not copied: see stream(_:…).
                switch stream(
                    index, scalars: scalars, variable: variable, capture: capture,
                    others: others, cursor: &cursor, inner: &inner)
                {
                case .again: continue
                case .item(let item): return item
                }
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
                    return .item(
                        .skipped(
                            SkippedTask(
                                id: Template(spec.id).render(bindings), spec: index,
                                reason: reason, byJob: byJobSkips.contains(index))))
                }
                endExpansion(index)
                specs[index].emitted += 1
                return .item(
                    .skipped(
                        SkippedTask(
                            id: spec.id, spec: index, reason: reason,
                            byJob: byJobSkips.contains(index))))
            }
        }
    }

    /// What one step of a streaming spec came to.
    private enum Step {
        /// Take another step.
        case again
        /// What ``advance(_:)`` returns.
        case item(Next?)
    }

    /// One step of a spec that fans out over a capture: the next child for the value at
    /// hand, or the next value, or a wait for more, or the end of the spec.
    private mutating func stream(
        _ index: Int, scalars: [String: String], variable: String, capture: String,
        others: [(name: String, source: ForeachSource)], cursor: inout CaptureValues.Cursor,
        inner: inout (value: String, combinations: CombinationIterator)?
    ) -> Step {
        let spec = job.tasks[index]
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
                let item =
                    if let reason = fanOutSkips[index] {
                        skip(index, bindings: all, reason: reason)
                    } else {
                        build(index, bindings: all)
                    }
                if let item { return .item(item) }
                return .again
            }
        }
        if let value = captures[capture]!.next(&cursor) {
            specs[index].phase = .streaming(
                scalars: scalars, variable: variable, capture: capture, others: others,
                cursor: cursor, inner: (value, CombinationIterator(others)))
            return .again
        }
        let status = status(of: capture)
        guard status.complete else {
            specs[index].phase = .streaming(
                scalars: scalars, variable: variable, capture: capture, others: others,
                cursor: cursor, inner: nil)
            return .item(nil)
        }
        endExpansion(index)
        if let failed = status.failedTask {
            // The values that came were used; the rest are unknown.
            let later = "; its later values are unknown"
            let reason =
                if let skipped = fanOutSkips[index] {
                    specs[index].emitted > 0 ? skipped + later : skipped
                } else {
                    failureReason(capture, failed) + later
                }
            let item = SkippedTask(
                id: spec.id, spec: index, reason: reason, byJob: byJobSkips.contains(index))
            specs[index].emitted += 1
            return .item(.item(.skipped(item)))
        }
        return .item(nil)
    }

    /// Marks a dependent spec skipped: a skip per task whose id is known without the missing
    /// values, else one for the whole spec (``advance(_:)`` hands them out).
    mutating func beginSkipping(_ index: Int, reason: String) {
        let spec = job.tasks[index]
        let idNeedsCaptures = Template(spec.id).variables.contains { name in
            !spec.foreach.contains { $0.name == name }
        }
        let enumerable = spec.captureSource == nil && !idNeedsCaptures
        specs[index].phase = .skipping(
            reason: reason,
            enumerable ? CombinationIterator(spec.foreach, zip: spec.zip) : nil)
    }

    /// The spec has handed out all its tasks (it is complete once they have finished).
    private mutating func endExpansion(_ index: Int) {
        specs[index].phase = .done
        changes += 1
    }

    /// Counts task `index` with `bindings` as handed out, for the feed to build; `nil` for a
    /// fan-out child whose value came before (its child was handed out then).
    private mutating func build(_ index: Int, bindings: [String: String]) -> Next? {
        // Read in place: a copy of the spec per task retains and releases every field of it.
        if job.tasks[index].captureSource != nil {
            let id = TaskBuilder.id(of: job.tasks[index], bindings: bindings)
            guard isNewChild(index, id: id) else { return nil }
        }
        specs[index].emitted += 1
        return .build(spec: index, bindings: bindings)
    }

    /// The skip of fan-out child `index` with `bindings`, under its own id; `nil` for a value
    /// captured before (its child was skipped then).
    private mutating func skip(_ index: Int, bindings: [String: String], reason: String) -> Next? {
        let id = TaskBuilder.id(of: job.tasks[index], bindings: bindings)
        guard isNewChild(index, id: id) else { return nil }
        specs[index].emitted += 1
        return .item(
            .skipped(
                SkippedTask(
                    id: id, spec: index, reason: reason, byJob: byJobSkips.contains(index))))
    }

    /// Whether fan-out spec `index` has not handed out a child `id` yet (it has now).
    private mutating func isNewChild(_ index: Int, id: String) -> Bool {
        let keys = fannedOut[index] ?? CompactKeySet()
        fannedOut[index] = keys
        return keys.insert(FNV1a.taskKey(job: job.name, task: id))
    }
}
