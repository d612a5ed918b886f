import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why and how a run stops before its end: the first SIGINT or SIGTERM, or the run's deadline
/// (`--deadline`, the job's `"deadline"`), which ends it as SIGTERM does. No task starts after
/// it; what is in flight has the grace period, then is cancelled. A second stop (a second
/// Ctrl-C, a signal after the deadline) cancels at once.
final class RunStop: Sendable {
    /// What stopped the run.
    enum Cause: Sendable, Equatable {
        case signal(Int32)
        /// The deadline, in seconds from the start, was reached.
        case deadline(TimeInterval)

        /// The signal whose exit status the run takes (128 + it): the deadline's is SIGTERM's.
        var exitSignal: Int32 {
            switch self {
            case .signal(let number): number
            case .deadline: SIGTERM
            }
        }
    }

    /// Set once stopping starts: the task slots read it before each task.
    let stopping: Locked<Bool>
    private let first = Locked<Cause?>(nil)
    /// Set once what was in flight was cancelled (the grace period ran out, or a second stop).
    private let cancelled = Locked(false)
    private let gracePeriod: TimeInterval
    private let time: any TimeSource
    /// The requests' waits (backoffs, rate limits, host pauses), which the stop ends at once.
    private let waits: StoppingTimeSource?
    private let cancel: @Sendable () -> Void

    /// - Parameter cancel: cancels what is in flight.
    init(
        stopping: Locked<Bool>, gracePeriod: TimeInterval, time: any TimeSource,
        waits: StoppingTimeSource? = nil, cancel: @escaping @Sendable () -> Void
    ) {
        self.stopping = stopping
        self.gracePeriod = gracePeriod
        self.time = time
        self.waits = waits
        self.cancel = cancel
    }

    /// The first cause, once the run is stopping.
    var cause: Cause? { first.withLock { $0 } }

    /// Stops scheduling, and cancels what is in flight after the grace period (at once when
    /// the run was already stopping).
    func stop(_ cause: Cause) {
        let isFirst = first.withLock { value -> Bool in
            guard value == nil else { return false }
            value = cause
            return true
        }
        stopping.withLock { $0 = true }
        waits?.stop()
        guard isFirst else { return cancelInFlight() }
        Task { [time, gracePeriod] in
            try? await time.sleep(for: .seconds(gracePeriod))
            self.cancelInFlight()
        }
    }

    /// Whether the stop cancelled what was in flight. A deadline that came when every task
    /// had started, and all of them ended within the grace period, cut nothing: such a run
    /// ends as one that met no deadline (its exit code is 0 or 1, not 143).
    var cutInFlight: Bool { cancelled.withLock { $0 } || waits?.cutAWait == true }

    private func cancelInFlight() {
        cancelled.withLock { $0 = true }
        cancel()
    }

    /// Stops the run with ``Cause/deadline(_:)`` `seconds` from now, after calling
    /// `reached`; cancel the task returned when the run ends first.
    func watch(deadline seconds: TimeInterval, reached: @escaping @Sendable () -> Void)
        -> Task<Void, Never>
    {
        Task { [time] in
            do {
                try await time.sleep(for: .seconds(seconds))
            } catch {
                return
            }
            guard cause == nil else { return }
            reached()
            stop(.deadline(seconds))
        }
    }
}
