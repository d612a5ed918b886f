@testable import CourierJobs
import Testing

/// Which logs make up a job's history, and whether they hold a whole run of it, decided from
/// the runs' first lines alone.
@Suite("Job history")
struct JobHistoryTests {
    static func start(
        _ path: String, at time: Double, completes: Bool = false, shard: (Int, Int)? = nil
    ) -> JobHistory.RunStart {
        JobHistory.RunStart(
            path: path, time: time, completesEarlier: completes,
            shard: shard.flatMap { Shard(index: $0.0, count: $0.1) })
    }

    @Test("a plain run and what completes it since; the runs before it are left out")
    func latestPlainRunAndItsRepairs() {
        let history = JobHistory.select([
            Self.start("old", at: 1), Self.start("plain", at: 2),
            Self.start("resume", at: 3, completes: true),
        ])
        #expect(history.logs == ["plain", "resume"])
        #expect(history.whole)
    }

    @Test("only `--task` runs or replays: no whole run, so tasks never reached are unknown")
    func noPlainRunIsNotWhole() {
        let history = JobHistory.select([
            Self.start("task-a", at: 1, completes: true),
            Self.start("task-b", at: 2, completes: true),
        ])
        #expect(history.logs == ["task-a", "task-b"])
        #expect(!history.whole)
        // Until a resume of the whole job ends: it walked every task (a trial's shard runs
        // after one said "no whole run" still).
        var resume = Self.start("resume", at: 3, completes: true)
        resume.walksAll = true
        let after = Self.start("task-c", at: 4, completes: true)
        #expect(
            JobHistory.select([Self.start("task-a", at: 1, completes: true), resume, after]).whole)
    }

    @Test("a split is whole only when every shard of it has its plain run")
    func everyShardOrNotWhole() {
        let some = JobHistory.select([
            Self.start("s0", at: 1, shard: (0, 3)), Self.start("s2", at: 2, shard: (2, 3)),
        ])
        #expect(Set(some.logs) == ["s0", "s2"])
        #expect(!some.whole)
        let every = JobHistory.select([
            Self.start("s0", at: 1, shard: (0, 3)), Self.start("s1", at: 2, shard: (1, 3)),
            Self.start("s2", at: 3, shard: (2, 3)),
        ])
        #expect(every.whole)
        var resume = Self.start("r", at: 3, completes: true)
        resume.walksAll = true
        #expect(
            JobHistory.select([
                Self.start("s0", at: 1, shard: (0, 3)), Self.start("s2", at: 2, shard: (2, 3)),
                resume,
            ]).whole, "a whole-job resume after some shards' runs")
    }

    /// A trial's history said "every task done" after shard 0's resume, though shard 1's
    /// killed run had reached none of its tasks.
    @Test("a killed run leaves the history not whole until a resume of its shard ends")
    func killedRunsNeedTheirResume() {
        var killed = Self.start("s1", at: 2, shard: (1, 2))
        killed.ended = false
        var resume0 = Self.start("r0", at: 3, completes: true, shard: (0, 2))
        resume0.walksAll = true
        let starts = [Self.start("s0", at: 1, shard: (0, 2)), killed, resume0]
        #expect(!JobHistory.select(starts).whole, "shard 0's resume does not cover shard 1")
        var resume1 = Self.start("r1", at: 4, completes: true, shard: (1, 2))
        resume1.walksAll = true
        #expect(JobHistory.select(starts + [resume1]).whole)
        var cut = resume1
        cut.ended = false
        #expect(!JobHistory.select(starts + [cut]).whole, "a resume killed in turn covers nothing")
        var whole = Self.start("rw", at: 5, completes: true)
        whole.walksAll = true
        #expect(JobHistory.select(starts + [whole]).whole, "a whole-job resume covers every shard")
        var task = Self.start("t", at: 5, completes: true)
        task.walksAll = false
        #expect(!JobHistory.select(starts + [task]).whole, "a --task run covers nothing")
    }
}
