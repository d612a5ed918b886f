import Courier
import Foundation

/// Prints the first task failures to stderr, `--quiet` or not, so that cron mails them (all of
/// them are in the log). Each line names the job: several jobs' cron mail often goes to one
/// address.
final class FailureReporter: Sendable {
    private let console: Console
    private let job: String
    private let printed = Locked(0)
    /// Tasks skipped by the job's own rules (``TaskFeed/SkippedTask/byJob``).
    private let byJob = Locked(0)
    /// Set when a progress line is on the terminal: each message first clears it, so that
    /// it is not printed over the line's tail (the next tick draws the line again).
    private let clearsLine: Bool
    static let limit = 10

    init(console: Console, job: String, clearsLine: Bool = false) {
        self.console = console
        self.job = job
        self.clearsLine = clearsLine
    }

    /// Reasons of failed tasks by their shape (``shape(of:)``), in the order first seen, each
    /// with the reason as first seen and how many tasks failed so after it.
    private let reasons = Locked<(order: [String], first: [String: String], more: [String: Int])>(
        ([], [:], [:]))

    /// A reason with its measurements taken out: curl says "after 8 ms" of one refused
    /// connection and "after 14 ms" of the next, "timed out after 30001 milliseconds with 512
    /// bytes received", and one outage must read as one reason. Other numbers (a status, a
    /// port) stay: a 500 and a 404 are two reasons.
    static func shape(of reason: String) -> String {
        var shape = ""
        var number = ""
        var rest = Substring(reason)
        while let character = rest.first {
            if character.isASCII, character.isNumber {
                number.append(character)
                rest = rest.dropFirst()
                continue
            }
            if !number.isEmpty {
                let measured = [" ms", " milliseconds", " bytes", " seconds"].contains {
                    rest.hasPrefix($0)
                }
                shape += measured ? "#" : number
                number = ""
            }
            shape.append(character)
            rest = rest.dropFirst()
        }
        return shape + number
    }

    /// What became of a task that did not end ok, as its line and its count say it.
    enum Ending: String {
        case failed, skipped, held

        /// The first line: `task ID failed CONTEXT: REASON`.
        func first(task: String, context: String, reason: String) -> String {
            switch self {
            case .failed: "task \(task) failed\(context): \(reason)"
            case .skipped: "task \(task) skipped\(context): \(reason)"
            case .held: "task \(task) not sent\(context): \(reason)"
            }
        }

        /// The count of the others: `3 more tasks failed the same way: REASON`.
        func more(_ count: Int, reason: String) -> String {
            let tasks = "\(count) more \(self == .held ? "write" : "task")\(count == 1 ? "" : "s")"
            switch self {
            case .failed: return "\(tasks) failed the same way: \(reason)"
            case .skipped: return "\(tasks) skipped the same way: \(reason)"
            case .held: return "\(tasks) not sent again the same way: \(reason)"
            }
        }
    }

    /// A task that failed (or was skipped, or a write held): the first of each reason is
    /// printed in full (`task ID failed CONTEXT: REASON`), the others only counted, for
    /// ``finish()``. A night where 500 tasks failed on one outage mails one line of it and a
    /// count, not ten copies and "see the log"; a trial's 20 held writes read "2 … more
    /// failures; see the log".
    ///
    /// - Parameter general: the reason as it stands for any task, when it names its own
    ///   (a held write's `--task w-1` is `--task ID` there): what the count's line says.
    func failed(
        task: String, context: String = "", reason: String, general: String? = nil,
        as ending: Ending = .failed, byJob: Bool = false
    ) {
        if byJob { self.byJob.withLock { $0 += 1 } }
        let general = general ?? reason
        let shape = ending.rawValue + "\u{0}" + Self.shape(of: general)
        let first = reasons.withLock { state -> Bool in
            if state.more[shape] == nil {
                state.order.append(shape)
                state.first[shape] = general
                state.more[shape] = 0
                return true
            }
            state.more[shape, default: 0] += 1
            return false
        }
        if first { report(ending.first(task: task, context: context, reason: reason)) }
    }

    /// The counts of the failures not printed, one line per reason, after the run; past the
    /// tenth reason, one line for all the others.
    func finish() {
        let (order, first, more) = reasons.withLock { ($0.order, $0.first, $0.more) }
        let job = job.showingControlCharacters
        for shape in order.prefix(Self.limit) {
            guard let count = more[shape], count > 0, let reason = first[shape] else { continue }
            let ending = shape.split(separator: "\u{0}").first.flatMap {
                Ending(rawValue: String($0))
            }
            print(
                "courier: \(job): "
                    + (ending ?? .failed).more(count, reason: reason.showingControlCharacters))
        }
        let others = order.dropFirst(Self.limit)
        let count = others.reduce(0) { $0 + 1 + (more[$1] ?? 0) }
        if count > 0 {
            print(
                "courier: \(job): \(count) more task\(count == 1 ? "" : "s") did not end ok, in \(others.count) other way\(others.count == 1 ? "" : "s"); see the log"
            )
        }
        // A trial's resume proposed, night after night, a repair that met the same skip.
        let byJob = byJob.withLock { $0 }
        if byJob > 0 {
            print(
                "courier: \(job): \(byJob) task\(byJob == 1 ? " was" : "s were") skipped by the job itself (a {name} that takes one value, whose capture found several): a resume meets the same; fan out over the capture with foreach, or make it find one value"
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
            text = "courier: \(job.showingControlCharacters): more; see the log"
        } else {
            return
        }
        print(text)
    }

    private func print(_ text: String) {
        if clearsLine { console.overwriteLine(text, newline: true) } else { console.error(text) }
    }
}
