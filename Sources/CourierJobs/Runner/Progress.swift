import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Counters a run updates as tasks finish, and the live progress line drawn from them.
final class Progress: @unchecked Sendable {
    struct Counts {
        var done = 0
        var ok = 0
        var failed = 0
        var requests = 0
        /// Tasks `--resume` skipped: done by an earlier run.
        var alreadyDone = 0
        /// Tasks ok with a 304: their saved output was left as it was.
        var notModified = 0
        /// Tasks that ended `ok` on a response an `onResponse` rule ignores.
        var ignored = 0
        /// Writes sent again with their idempotency keys, their earlier outcome unknown.
        var writesResent = 0
        /// Writes not sent again (``WriteRule``): each ended its task failed.
        var writesHeld = 0
        /// Requests retried, or that ended their task failed (`checks.maxErrorRate`).
        var unsuccessful = 0
        /// Every task known so far: the validated count, plus those found while running
        /// (fan-out over captured values).
        var total = 0
    }

    private let started = ContinuousClock.now
    private let counts: Locked<Counts>
    /// Whether fan-outs are still finding tasks: the total is then a lower bound, and neither
    /// a percentage nor an ETA can be told.
    private let discovering = Locked(false)

    init(total: Int) {
        var initial = Counts()
        initial.total = total
        counts = Locked(initial)
    }

    /// Tasks found while running, not counted by validation.
    func tasksFound(_ count: Int) {
        counts.withLock { $0.total += count }
    }

    /// Says whether fan-outs are still finding tasks.
    func setDiscovering(_ value: Bool) {
        discovering.withLock { $0 = value }
    }

    /// Whether every task counted so far ended.
    var everyCountedTaskEnded: Bool {
        let counts = snapshot
        return counts.done >= counts.total
    }

    /// A task counted in the total that another shard runs.
    func taskInOtherShard() {
        counts.withLock { $0.total -= 1 }
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// A task `--resume` skipped; it counts as done and ok.
    func taskAlreadyDone() {
        counts.withLock {
            $0.done += 1
            $0.ok += 1
            $0.alreadyDone += 1
        }
    }

    /// A write ``WriteRule`` sent again with its key, or held.
    func write(resent: Bool) {
        counts.withLock {
            if resent { $0.writesResent += 1 } else { $0.writesHeld += 1 }
        }
    }

    /// Requests sent outside any task's count (a login sent again to renew its token).
    func requestsSent(_ requests: Int) {
        counts.withLock { $0.requests += requests }
    }

    /// - Parameter unsuccessful: the task's requests that were retried or ended it failed.
    func taskFinished(
        ok: Bool, requests: Int, notModified: Bool = false, ignored: Bool = false,
        unsuccessful: Int = 0
    ) {
        counts.withLock {
            $0.done += 1
            $0.unsuccessful += unsuccessful
            if notModified { $0.notModified += 1 }
            if ignored { $0.ignored += 1 }
            $0.requests += requests
            if ok { $0.ok += 1 } else { $0.failed += 1 }
        }
    }

    /// `[120/500] 24%  38.2 req/s  2 failed  ETA 10s`, or while fan-outs still find tasks,
    /// `[120/500+]  38.2 req/s  2 failed  finding more tasks`.
    func line() -> String {
        let counts = snapshot
        if discovering.withLock({ $0 }) {
            let elapsed = max(0.001, started.duration(to: .now).seconds)
            return String(
                format: "[%d/%d+]  %.1f req/s  %d failed  finding more tasks", counts.done,
                counts.total, Double(counts.requests) / elapsed, counts.failed)
        }
        let total = counts.total
        let elapsed = max(0.001, started.duration(to: .now).seconds)
        let rate = Double(counts.requests) / elapsed
        let percent = total > 0 ? counts.done * 100 / total : 100
        let remaining =
            counts.done > 0 ? Double(total - counts.done) * elapsed / Double(counts.done) : 0
        return String(
            format: "[%d/%d] %d%%  %.1f req/s  %d failed  ETA %@", counts.done, total, percent,
            rate,
            counts.failed, DurationText.short(remaining))
    }

    /// Whether the line may be drawn: standard error is a terminal that can, and `NO_COLOR`
    /// does not ask for plain text (``Console/drawsOnStandardError``).
    static var canDraw: Bool { Console.drawsOnStandardError }
}
