import Courier
@testable import CourierJobs
import Foundation
import Testing

/// The feed's decisions as a value, without a run: order, waiting for a capture, fan-out
/// children as values arrive (repeats dropped), and skips when an input fails or finds nothing.
@Suite("Task schedule")
struct TaskScheduleTests {
    static let tasks = #"""
        {"id": "login", "path": "/login", "capture": {"token": {"json": "/token"}}},
        {"id": "list", "path": "/list", "capture": {"ids": {"json": "/ids/*"}}},
        {"id": "me", "path": "/me", "auth": {"bearer": "{token}"}},
        {"id": "user-{id}", "path": "/users/{id}", "foreach": {"id": {"capture": "ids"}}},
        {"id": "plain-{n}", "path": "/p/{n}", "foreach": {"n": {"range": [1, 2]}}}
        """#

    static func schedule() throws -> TaskSchedule {
        TaskSchedule(
            job: try ExpansionTests.load(ExpansionTests.job(tasks: Self.tasks)), memoryLimit: 100)
    }

    /// What `next()` gives, in words: a task's id, `skip id: reason`, `wait` or `end`.
    static func take(_ schedule: inout TaskSchedule, count: Int = 1) -> [String] {
        (0..<count).map { _ in
            switch schedule.next() {
            case .task(let task): task.id
            case .skipped(let skipped): "skip \(skipped.id): \(skipped.reason)"
            case .failure(_, _, let id): "failure \(id)"
            case .wait: "wait"
            case .end: "end"
            }
        }
    }

    @Test("tasks that wait for nothing come in file order; the others wait for their inputs")
    func order() throws {
        var schedule = try Self.schedule()
        #expect(Self.take(&schedule, count: 5) == ["login", "list", "plain-1", "plain-2", "wait"])
    }

    @Test("a fan-out child per captured value as it arrives, repeats dropped, before the end")
    func fanOut() throws {
        var schedule = try Self.schedule()
        _ = Self.take(&schedule, count: 4)
        try schedule.captured(["a", "b", "a"], for: "ids")
        #expect(Self.take(&schedule, count: 3) == ["user-a", "user-b", "wait"])
        try schedule.captured(["c"], for: "ids")
        #expect(Self.take(&schedule) == ["user-c"])
        schedule.finished(spec: 1, ok: true, id: "list")
        for id in ["user-a", "user-b", "user-c"] { schedule.finished(spec: 3, ok: true, id: id) }
        #expect(Self.take(&schedule) == ["wait"], "`me` still waits for the token")
        try schedule.captured(["t0k3n"], for: "token")
        schedule.finished(spec: 0, ok: true, id: "login")
        let me = schedule.next()
        guard case .task(let task) = me else {
            Issue.record("expected the task that uses the token, got \(me)")
            return
        }
        #expect(task.id == "me")
        #expect(task.request.headers["Authorization"] == "Bearer t0k3n")
        schedule.finished(spec: 2, ok: true, id: "me")
        for id in ["plain-1", "plain-2"] { schedule.finished(spec: 4, ok: true, id: id) }
        #expect(Self.take(&schedule) == ["end"])
    }

    /// Trial UUU: the progress line dropped its `+` once the listing ended, while children of
    /// its values were still to be handed out (and so not yet in its total).
    @Test("a fan-out is still finding tasks until it has handed out its last child")
    func discoveringUntilTheLastChild() throws {
        var schedule = try Self.schedule()
        #expect(schedule.isDiscovering, "before its values' task ran")
        _ = Self.take(&schedule, count: 4)
        try schedule.captured(["a", "b", "c"], for: "ids")
        schedule.finished(spec: 1, ok: true, id: "list")
        #expect(schedule.isDiscovering, "its values are known, its children not handed out")
        #expect(Self.take(&schedule, count: 2) == ["user-a", "user-b"])
        #expect(schedule.isDiscovering, "one child to come")
        #expect(Self.take(&schedule) == ["user-c"])
        _ = Self.take(&schedule)
        #expect(!schedule.isDiscovering, "every child handed out: the total is whole")
    }

    @Test("an input that failed skips its dependants, naming the task that failed")
    func failedInput() throws {
        var schedule = try Self.schedule()
        _ = Self.take(&schedule, count: 4)
        schedule.finished(spec: 0, ok: false, id: "login")
        schedule.finished(spec: 1, ok: true, id: "list")
        // A fan-out over a capture that found no value has no children: nothing to skip.
        #expect(
            Self.take(&schedule, count: 2) == [
                #"skip me: input task login (tasks[0], which captures "token") did not succeed"#,
                "end",
            ])
    }

    @Test("a fan-out whose parent fails after some values: those ran, the rest is one skip")
    func parentFailsMidway() throws {
        var schedule = try Self.schedule()
        _ = Self.take(&schedule, count: 4)
        try schedule.captured(["a"], for: "ids")
        #expect(Self.take(&schedule) == ["user-a"])
        schedule.finished(spec: 1, ok: false, id: "list")
        let taken = Self.take(&schedule)
        #expect(taken.first?.hasPrefix("skip user-{id}: input task list") == true, "\(taken)")
        #expect(taken.first?.hasSuffix("its later values are unknown") == true)
    }
}
