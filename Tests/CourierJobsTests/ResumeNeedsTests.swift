@testable import CourierJobs
import Foundation
import Testing

/// Which done producers a resume sends again: only those a task it will send takes. Another
/// shard's tasks and writes the history holds are not sent, so they need nothing.
@Suite("Resume needs")
struct ResumeNeedsTests {
    /// A login whose token six items take: `method` theirs.
    static func job(method: String = "GET") throws -> Job {
        try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "login", "path": "/login", "capture": {"token": {"json": "/token"}}},
                    {"id": "item-{n}", "method": "\#(method)", "path": "/i/{n}", "headers": {"X-T": "{token}"},
                     "foreach": {"n": {"range": [1, 6]}}}
                    """#))
    }

    static func history(_ job: Job, done: [String]) -> RunHistory {
        RunHistory(runs: ["r1"], done: Set(done.map { FNV1a.taskKey(job: job.name, task: $0) }))
    }

    @Test("a shard's resume sends the login only when one of its own items is not done")
    func aShardNeedsOnlyForItsOwnTasks() throws {
        let job = try Self.job()
        let shards = (0..<3).map { Shard(index: $0, count: 3)! }
        let undone = "item-4"
        let owner = try #require(shards.first { $0.owns(taskID: undone) })
        let done = ["login"] + (1...6).map { "item-\($0)" }.filter { $0 != undone }
        let history = Self.history(job, done: done)
        for shard in shards {
            let needed = ResumeNeeds.producers(of: job, history: history, shard: shard)
            #expect(needed.contains(0) == (shard == owner), "shard \(shard)")
        }
        #expect(ResumeNeeds.producers(of: job, history: history).contains(0))
    }

    @Test("writes the history holds need no login; one named by its id does")
    func heldWritesNeedNothing() throws {
        let job = try Self.job(method: "POST")
        var history = Self.history(job, done: ["login"])
        // Every item's write was answered 2xx in r1 (their expectation failed, say).
        var lines = TaskHistory()
        for n in 1...6 {
            var fields = LogLine.Fields()
            (fields.event, fields.ts, fields.run, fields.job) =
                ("request", "2026-11-23T00:00:00.000Z", "r1", job.name)
            (fields.task, fields.method, fields.status, fields.outcome) =
                ("item-\(n)", "POST", 201, "failed")
            lines.add(try #require(LogLine(fields)))
        }
        history.writes = lines.writes
        #expect(!ResumeNeeds.producers(of: job, history: history).contains(0))
        #expect(ResumeNeeds.producers(of: job, history: history, named: ["item-2"]).contains(0))
    }
}
