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
        /// The job's own rules make it unsendable (a `{name}` that takes one value, whose
        /// capture found several): sending its producers again meets the same.
        var byJob = false
    }

    private let state: Locked<TaskSchedule>
    /// The schedule's constants, to build its tasks outside the lock.
    private let job: Job
    private let base: URLBuilder.Base?
    private let cursors: [String: String]
    private let redactor: Redactor
    /// Whether any task waits for another's captures: without, nothing reads what
    /// ``finished(_:ok:id:)`` records, and each task's end need not take the lock that every
    /// task's start takes.
    private let hasDependents: Bool

    /// - Parameters:
    ///   - redactor: learns each secret capture before any line that could hold it is written.
    ///   - memoryLimit: captured values kept in memory per capture; the rest go to a file.
    ///   - cursors: the `since` tasks' kept cursors, by task id, as the run found them.
    init(
        job: Job, cursors: [String: String] = [:], redactor: Redactor,
        memoryLimit: Int = 100_000
    ) {
        let schedule = TaskSchedule(job: job, cursors: cursors, memoryLimit: memoryLimit)
        state = Locked(schedule)
        self.job = schedule.job
        base = schedule.base
        self.cursors = schedule.cursors
        self.redactor = redactor
        hasDependents = job.tasks.contains(where: \.isDependent)
    }

    /// Whether a fan-out may still find tasks (``TaskSchedule/isDiscovering``).
    var isDiscovering: Bool { state.withLock { $0.isDiscovering } }

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

    /// The next thing to do. A task is built after the lock is let go: the slots of the other
    /// curl loop waited for each build, the lock being the schedule's.
    func next() -> Item {
        let (step, woken) = state.withLock { state in
            let before = state.changes
            let step = state.nextStep()
            return (step, state.changes == before ? [] : state.takeWaiters())
        }
        for waiter in woken { waiter.resume() }
        switch step {
        case .item(let item): return item
        case .build(let spec, let bindings):
            return TaskSchedule.built(
                spec, bindings: bindings, job: job, base: base, cursors: cursors)
        }
    }

    /// Records the values one response of a task gave; secret ones are redacted from here on.
    func capture(_ values: [String], for rule: CaptureRule) throws {
        if rule.secret { for value in values { redactor.learn(value) } }
        let woken = try state.withLock { state in
            try state.captured(values, for: rule.name)
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
                base: state.base, cursors: state.cursors
            ).get()
        }
    }

    /// A task handed out by ``next()`` is over (run, already done, or skipped).
    func finished(_ spec: Int?, ok: Bool, id: String) {
        guard hasDependents, let spec else { return }
        let woken = state.withLock { state in
            state.finished(spec: spec, ok: ok, id: id)
            return state.takeWaiters()
        }
        for waiter in woken { waiter.resume() }
    }

    /// The specs not every task of which ended ok: one failed or was skipped, or (a run that
    /// stopped early) a dependent spec had not handed out, or seen end, all its tasks.
    var unsettledSpecs: Set<Int> {
        state.withLock { state in
            Set(
                state.specs.indices.filter { index in
                    state.specs[index].failedTask != nil
                        || (state.job.tasks[index].isDependent && !state.specs[index].isComplete)
                })
        }
    }

    /// Whether a dependent spec may still have tasks it has not handed out: a run that
    /// stopped now has not counted them.
    var isUnlisted: Bool {
        state.withLock { state in
            state.specs.indices.contains { index in
                state.job.tasks[index].isDependent && state.specs[index].isOpen
            }
        }
    }

    /// Frees the captured values' temporary files.
    func close() {
        state.withLock { state in
            for values in state.captures.values { values.release() }
        }
    }
}
