import Courier
import Foundation

/// Prints the first task failures to stderr, `--quiet` or not, so that cron mails them (all of
/// them are in the log). Each line names the job: several jobs' cron mail often goes to one
/// address.
final class FailureReporter: Sendable {
    private let console: Console
    private let job: String
    private let printed = Locked(0)
    /// Set when a progress line is on the terminal: each message first clears it, so that
    /// it is not printed over the line's tail (the next tick draws the line again).
    private let clearsLine: Bool
    static let limit = 10

    init(console: Console, job: String, clearsLine: Bool = false) {
        self.console = console
        self.job = job
        self.clearsLine = clearsLine
    }

    /// Reasons of failed tasks, in the order first seen, each with how many tasks failed so
    /// after the one printed.
    private let reasons = Locked<(order: [String], more: [String: Int])>(([], [:]))

    /// A task that failed: the first of each reason is printed in full (`task ID failed
    /// CONTEXT: REASON`), the others only counted, for ``finish()``. A night where 500 tasks
    /// failed on one outage mails one line of it and a count, not ten copies and "see the log".
    func failed(task: String, context: String = "", reason: String) {
        let first = reasons.withLock { state -> Bool in
            if state.more[reason] == nil {
                state.order.append(reason)
                state.more[reason] = 0
                return true
            }
            state.more[reason, default: 0] += 1
            return false
        }
        if first { report("task \(task) failed\(context): \(reason)") }
    }

    /// The counts of the failures not printed, one line per reason, after the run.
    func finish() {
        let (order, more) = reasons.withLock { ($0.order, $0.more) }
        for reason in order.prefix(Self.limit) {
            guard let count = more[reason], count > 0 else { continue }
            print(
                "courier: \(job.showingControlCharacters): \(count) more task\(count == 1 ? "" : "s") failed the same way: \(reason.showingControlCharacters)"
            )
        }
    }

    func report(_ message: String) {
        let count = printed.withLock { value -> Int in
            value += 1
            return value
        }
        let text: String
        if count <= Self.limit {
            text = "courier: \(job.showingControlCharacters): " + message.showingControlCharacters
        } else if count == Self.limit + 1 {
            text = "courier: \(job.showingControlCharacters): more failures; see the log"
        } else {
            return
        }
        print(text)
    }

    private func print(_ text: String) {
        if clearsLine { console.overwriteLine(text, newline: true) } else { console.error(text) }
    }
}
