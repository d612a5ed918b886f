import Courier
import Foundation

/// The run's clock as its requests' waits see it: a retry's backoff, a rate limit's token or a
/// host's pause ends at once when the run stops (``stop()``), with `CancellationError`, as a
/// cancelled task's wait does.
///
/// Each of those waits ends in a request the stop means not to send: "no new task starts,
/// nor a next page" held, but a task in a 4 s backoff sent its next attempt in the grace
/// period, and tasks waiting for rate-limit tokens sent theirs (trial L), so a stop lasted as
/// long as the longest wait. What is on the wire still has the grace period.
final class StoppingTimeSource: TimeSource {
    private let base: any TimeSource
    private struct State {
        var stopped = false
        /// Whether a wait was ended (or refused) by the stop: the run was cut short.
        var cut = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters whose task was cancelled before they were registered.
        var gone: Set<Int> = []
        var next = 0
    }
    private let state = Locked(State())

    init(_ base: any TimeSource) { self.base = base }

    func now() -> ContinuousClock.Instant { base.now() }
    func date() -> Date { base.date() }

    /// Ends every wait under way, and every later one at once.
    func stop() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            if !state.waiters.isEmpty { state.cut = true }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the stop ended a wait: a task it cut did not run to its end.
    var cutAWait: Bool { state.withLock { $0.cut } }

    /// The waits the stop would end now (for tests, which wait for a wait to begin).
    var waitsUnderWay: Int { state.withLock { $0.waiters.count } }

    func sleep(for duration: Duration) async throws {
        let refused = state.withLock { state -> Bool in
            if state.stopped { state.cut = true }
            return state.stopped
        }
        if refused { throw CancellationError() }
        let base = self.base
        let stoppedFirst = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await base.sleep(for: duration)
                return false
            }
            group.addTask {
                await self.untilStopped()
                return true
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if stoppedFirst { throw CancellationError() }
    }

    /// Returns once the run stops, or the waiting task is cancelled (its sleep ended first).
    private func untilStopped() async {
        let id = state.withLock { state -> Int in
            defer { state.next += 1 }
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.stopped || state.gone.remove(id) != nil { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    if !state.stopped { state.gone.insert(id) }
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
    }
}
