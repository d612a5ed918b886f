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

    @Test("a shard's split: each other shard's run nearest it, within its own night")
    func splitOfAShard() {
        var backfill = Self.start("b0-night2", at: 20, shard: (0, 2))
        backfill.window = "2026-01-01..2026-01-07"
        var sibling = Self.start("b1-night2", at: 21, shard: (1, 2))
        sibling.window = backfill.window
        var otherRange = Self.start("b1-other", at: 20.5, shard: (1, 2))
        otherRange.window = "2025-01-01..2025-02-01"
        let starts = [
            Self.start("n0-night1", at: 10, shard: (0, 2)),
            Self.start("n1-night1", at: 11, shard: (1, 2)),
            Self.start("n0-night3", at: 30, shard: (0, 2)),
            Self.start("n1-night3", at: 29, shard: (1, 2)),
            Self.start("whole", at: 40), Self.start("resume", at: 41, completes: true),
            backfill, sibling, otherRange,
        ]
        func split(_ path: String) -> [String] {
            JobHistory.split(of: starts.first { $0.path == path }!, among: starts).map(\.path)
        }
        // The same windows and count only; the night's runs, not the backfill's.
        #expect(split("b0-night2") == ["b0-night2", "b1-night2"])
        #expect(split("n0-night1") == ["n0-night1", "n1-night1"])
        // Shard 1 started a moment before shard 0 on night 3.
        #expect(split("n0-night3") == ["n1-night3", "n0-night3"])
        #expect(split("n1-night1") == ["n0-night1", "n1-night1"])
        // A run of the whole job, or a resume: itself alone.
        #expect(split("whole") == ["whole"])
        #expect(split("resume") == ["resume"])
        // A shard whose sibling never ran that night: not last night's sibling.
        let alone = [
            Self.start("a0", at: 0, shard: (0, 2)), Self.start("a1", at: 1, shard: (1, 2)),
            Self.start("a0-next", at: 86_400, shard: (0, 2)),
        ]
        #expect(JobHistory.split(of: alone[2], among: alone).map(\.path) == ["a0-next"])
    }

    @Test("the shards of a `run --task` are a split of the same tasks chosen")
    func splitOfChosenTasks() {
        var starts: [JobHistory.RunStart] = []
        for (index, globs) in [(0, ["half-*"]), (1, ["half-*"]), (2, ["half-*"]), (1, ["ev-*"])] {
            var run = Self.start(
                "t\(index)-\(globs[0])", at: Double(index), completes: true, shard: (index, 3))
            run.chosen = globs
            starts.append(run)
        }
        var resume = Self.start("resume", at: 4, completes: true, shard: (1, 3))
        resume.walksAll = true
        starts.append(resume)
        #expect(
            JobHistory.split(of: starts[1], among: starts).map(\.path)
                == ["t0-half-*", "t1-half-*", "t2-half-*"])
        #expect(JobHistory.split(of: resume, among: starts).map(\.path) == ["resume"])
    }

    @Test("a sharded backfill after a sharded night: the night's shards are not the backfill's")
    func shardedBackfillAfterAShardedNight() {
        var backfill = Self.start("b0", at: 10, shard: (0, 2))
        backfill.window = "2026-01-01..2026-01-07"
        let history = JobHistory.select([
            Self.start("n0", at: 1, shard: (0, 2)), Self.start("n1", at: 2, shard: (1, 2)),
            backfill,
        ])
        #expect(history.logs == ["b0"])
        #expect(!history.whole, "shard 1 of the backfill never ran")
    }

    @Test("a night that ran on one shard is not whole: the last night's other shard is not its")
    func oneShardOfTheNextNight() {
        let history = JobHistory.select([
            Self.start("n0", at: 0, shard: (0, 2)), Self.start("n1", at: 5, shard: (1, 2)),
            Self.start("m0", at: 86_400, shard: (0, 2)),
        ])
        #expect(history.logs == ["m0"])
        #expect(!history.whole)
        // Its other shard a minute later: the night is whole.
        let both = JobHistory.select([
            Self.start("n0", at: 0, shard: (0, 2)), Self.start("n1", at: 5, shard: (1, 2)),
            Self.start("m0", at: 86_400, shard: (0, 2)),
            Self.start("m1", at: 86_460, shard: (1, 2)),
        ])
        #expect(both.logs == ["m0", "m1"])
        #expect(both.whole)
    }

    @Test("rounds of shards: a shard that comes again starts the next night, however close in time")
    func roundsOfShards() {
        // Nights a few seconds apart, as a script runs them (trial XX).
        let scripted = JobHistory.select([
            Self.start("n0", at: 0, shard: (0, 2)), Self.start("n1", at: 5, shard: (1, 2)),
            Self.start("m0", at: 10, shard: (0, 2)),
        ])
        #expect(scripted.logs == ["m0"])
        #expect(!scripted.whole)
        // Tonight's shards in the other order are still tonight's.
        let reversed = JobHistory.select([
            Self.start("n0", at: 0, shard: (0, 2)), Self.start("n1", at: 5, shard: (1, 2)),
            Self.start("m1", at: 86_400, shard: (1, 2)),
            Self.start("m0", at: 86_410, shard: (0, 2)),
        ])
        #expect(reversed.logs == ["m1", "m0"])
        #expect(reversed.whole)
        // Two Kubernetes Jobs (`--once-per` keys) are two splits, whatever their times.
        var a = Self.start("a0", at: 0, shard: (0, 2))
        a.oncePer = "job-a"
        var b = Self.start("b1", at: 1, shard: (1, 2))
        b.oncePer = "job-b"
        #expect(JobHistory.split(of: b, among: [a, b]).map(\.path) == ["b1"])
    }
}
