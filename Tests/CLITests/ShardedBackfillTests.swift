import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A backfill run in shards, one shard killed (trial TT): the repair the report names reads
/// every shard's log, sends only what no shard did, and leaves the job complete; after a night,
/// the backfill is one other line, said to be cut, until its repair.
@Suite("sharded backfills")
struct ShardedBackfillTests {
    /// Six daily windows, each held at the server until the test opens its gate.
    static func writeJob(_ space: JobWorkspace, key: String, end: String) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "day-{windowStart}", "path": "/slow",
                 "query": {"key": "\#(key)", "ms": "0", "hold_until": "\#(key)-{windowStart}"},
                 "window": {"start": "2026-01-01", "end": "\#(end)", "step": "1d", "format": "date"},
                 "timeout": 900, "save": "days/{windowStart}.json"}
                """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 8,"#)
    }

    static func open(_ space: JobWorkspace, key: String, days: [String]) async {
        for day in days {
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(key)-\(day)"))
        }
    }

    static func reportJSON(_ space: JobWorkspace) async throws -> [String: Any] {
        let report = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8))
        let jobs = (object as? [String: Any])?["jobs"] as? [[String: Any]]
        return try #require(jobs?.first, "\(report.stdout)\(report.stderr)")
    }

    /// The days (`YYYY-MM-DD`) of the windows `shard` of 2 runs, from its dry run (`extra`: a
    /// backfill's `--window`).
    static func days(of shard: Int, _ space: JobWorkspace, _ extra: [String] = []) async throws
        -> [String]
    {
        let plan = try await CourierBinary.run(
            ["run", "job.json", "--dry-run", "--shard", "\(shard)/2"] + extra,
            directory: space.folder)
        #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
        return plan.stdout.split(separator: "\n").filter { !$0.hasPrefix("courier:") }.map {
            String($0.split(separator: "\t")[0].dropFirst("day-".count))
        }.sorted()
    }

    /// Runs `command` (a repair the report printed) word for word, in the workspace.
    static func run(_ command: String, in space: JobWorkspace) async throws
        -> CourierBinary.Result
    {
        let words = command.split(separator: " ").map(String.init)
        #expect(words.first == "courier", "\(command)")
        return try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: space.folder)
    }

    @Test(
        "a sharded backfill with a killed shard: one repair completes it, before and after a night")
    func killedShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sharded-backfill")
        let days = (1...6).map { "2026-01-0\($0)" }
        try Self.writeJob(space, key: key, end: "2026-01-07")
        await Self.open(space, key: key, days: days)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 0, "\(night.stdout)\(night.stderr)")
        // Shard 0's windows, from its dry run; the last of them stays held.
        let mine = try await Self.days(of: 0, space, ["--window", "2026-01-01..2026-01-07"])
        try #require(!mine.isEmpty && mine.count < days.count, "\(mine)")
        let held = mine.last!
        let gate = FixtureServer.uniqueKey("sharded-backfill")
        try Self.writeJob(space, key: gate, end: "2026-01-07")
        await Self.open(space, key: gate, days: days.filter { $0 != held })
        let first = try CourierBinary.launch(
            [
                "run", "job.json", "--window", "2026-01-01..2026-01-07", "--shard", "0/2",
                "--log-dir", space.logs.path, "--no-progress",
            ], directory: space.folder)
        // Killed once every window of it but the held one is saved.
        let logs = space.logs.appendingPathComponent("e2e")
        let reached = await OffPool.when {
            let text = ((try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? [])
                .filter { $0.contains("-shard-0-of-2") }
                .compactMap {
                    try? String(contentsOf: logs.appendingPathComponent($0), encoding: .utf8)
                }.joined()
            return text.components(separatedBy: #""outcome":"ok""#).count - 1 == mine.count - 1
        } then: {
            first.send(SIGKILL)
        }
        #expect(reached, "shard 0 never reached its held window")
        _ = await first.wait(seconds: 300)
        let second = try await space.run(
            ["--window", "2026-01-01..2026-01-07", "--shard", "1/2"], backend: "curl")
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")

        // The repair names the killed shard's log, and reads the other shard's with it: one
        // window to send.
        let report = try await Self.reportJSON(space)
        #expect(report["complete"] as? Bool == false)
        let next = try #require(report["next"] as? String)
        #expect(next.contains("-shard-0-of-2.jsonl"), "\(next)")
        let dry = try await Self.run(next + " --dry-run", in: space)
        #expect(
            (dry.stdout + dry.stderr).contains("resume: 1 task to send"),
            "\(dry.stdout)\(dry.stderr)")

        // A night before anyone repairs it: the backfill is one line, cut.
        try Self.writeJob(space, key: gate, end: "2026-01-08")
        await Self.open(space, key: gate, days: ["2026-01-07"])
        let after = try await space.run(backend: "curl")
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        #expect(after.stdout.contains("did not reach every task"), "\(after.stdout)")
        let others = try await Self.reportJSON(space)["otherLines"] as? [[String: Any]] ?? []
        #expect(others.count == 1, "\(others)")
        #expect(others.first?["unfinished"] as? Bool == true, "\(others)")
        let repairLine = try #require(others.first?["next"] as? String)
        await Self.open(space, key: gate, days: [held])
        let repair = try await Self.run(repairLine, in: space)
        #expect(repair.status == 0, "\(repairLine)\n\(repair.stdout)\(repair.stderr)")
        let lines = try space.logLines()
        let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
        let sent = lines.filter {
            $0["run"] as? String == run && $0["event"] as? String == "request"
        }
        .compactMap { $0["task"] as? String }
        #expect(sent == ["day-\(held)"], "the repair sent only the held window: \(sent)")
        let done = try await Self.reportJSON(space)
        #expect(done["complete"] as? Bool == true, "\(done)")
        #expect(done["otherLines"] == nil, "\(done)")
    }

    @Test("a sharded backfill with a shard that never ran is named after a night, until repaired")
    func missingShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sharded-backfill-missing")
        let days = (1...7).map { "2026-01-0\($0)" }
        try Self.writeJob(space, key: key, end: "2026-01-07")
        await Self.open(space, key: key, days: days)
        #expect(try await space.run(backend: "curl").status == 0)
        let only = try await space.run(
            ["--window", "2026-01-01..2026-01-07", "--shard", "0/2"], backend: "curl")
        #expect(only.status == 0, "\(only.stdout)\(only.stderr)")
        let theirs = try await Self.days(of: 1, space, ["--window", "2026-01-01..2026-01-07"])
            .map { "day-\($0)" }
        try #require(!theirs.isEmpty)
        // Shard 1 never runs; the next night.
        try Self.writeJob(space, key: key, end: "2026-01-08")
        let night = try await space.run(backend: "curl")
        #expect(night.status == 0, "\(night.stdout)\(night.stderr)")
        #expect(night.stdout.contains("did not reach every task"), "\(night.stdout)")
        let report = try await Self.reportJSON(space)
        #expect(report["complete"] as? Bool == false, "\(report)")
        let others = report["otherLines"] as? [[String: Any]] ?? []
        #expect(others.count == 1 && others.first?["unfinished"] as? Bool == true, "\(others)")
        let repairLine = try #require(others.first?["next"] as? String)
        let repair = try await Self.run(repairLine, in: space)
        #expect(repair.status == 0, "\(repairLine)\n\(repair.stdout)\(repair.stderr)")
        let lines = try space.logLines()
        let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
        let sent = lines.filter {
            $0["run"] as? String == run && $0["event"] as? String == "request"
        }
        .compactMap { $0["task"] as? String }.sorted()
        #expect(sent == theirs, "the repair sent the missing shard's windows alone")
        #expect(try await Self.reportJSON(space)["complete"] as? Bool == true)
    }

    @Test(
        "a sharded night with a failed shard, then a backfill on one shard: report's repairs converge"
    )
    func backfillOnOneShardAfterAFailedNight() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sharded-night-failed")
        try space.writeJob(
            tasks: #"""
                {"id": "day-{windowStart}", "path": "/records/item",
                 "query": {"key": "\#(key)", "id": "{windowStart}"},
                 "window": {"start": "2026-01-01", "end": "2026-01-07", "step": "1d", "format": "date"},
                 "save": "days/{windowStart}.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let shard0 = try await Self.days(of: 0, space)
        // Some of shard 0's windows are before the backfill's range.
        try #require(shard0.contains { $0 < "2026-01-05" } && shard0.count < 6, "\(shard0)")
        let all = (1...6).map { "2026-01-0\($0)" }
        // Shard 0's windows fail at night (their items are missing upstream); shard 1's do not.
        try RecordsTests.set(
            key, all.filter { !shard0.contains($0) }.map { #"{"id": "\#($0)"}"# }, on: space.server)
        #expect(try await space.run(["--shard", "0/2"], backend: "curl").status == 1)
        #expect(try await space.run(["--shard", "1/2"], backend: "curl").status == 0)
        try RecordsTests.set(key, all.map { #"{"id": "\#($0)"}"# }, on: space.server)
        let backfill = try await space.run(
            ["--window", "2026-01-05..2026-01-07", "--shard", "1/2"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)\(backfill.stderr)")
        // Trial VV: every repair after the first sent nothing, and report named it again.
        var repairs = 0
        while repairs < 4, let next = try await Self.reportJSON(space)["next"] as? String {
            repairs += 1
            let repair = try await Self.run(next, in: space)
            #expect(repair.status == 0, "\(next)\n\(repair.stdout)\(repair.stderr)")
        }
        let report = try await Self.reportJSON(space)
        #expect(report["complete"] as? Bool == true, "after \(repairs) repairs: \(report)")
        #expect(repairs <= 2, "\(repairs) repairs")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/days").path)
        #expect(Set(saved) == Set(all.map { "\($0).json" }))
    }

    @Test("a night one shard never ran, or a backfill on one shard: report says not complete")
    func oneShardOnly() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("one-shard-night")
        let days = (1...9).map { "2026-01-0\($0)" }
        await Self.open(space, key: key, days: days)
        try Self.writeJob(space, key: key, end: "2026-01-04")
        for shard in ["0/2", "1/2"] {
            #expect(try await space.run(["--shard", shard], backend: "curl").status == 0)
        }
        #expect(try await Self.reportJSON(space)["complete"] as? Bool == true)
        // The next night, seconds later, on shard 0 alone (trial XX: complete, no next).
        try Self.writeJob(space, key: key, end: "2026-01-10")
        #expect(try await space.run(["--shard", "0/2"], backend: "curl").status == 0)
        let night = try await Self.reportJSON(space)
        #expect(night["complete"] as? Bool == false, "\(night)")
        let next = try #require(night["next"] as? String, "\(night)")
        let repair = try await Self.run(next, in: space)
        #expect(repair.status == 0, "\(next)\n\(repair.stdout)\(repair.stderr)")
        #expect(try await Self.reportJSON(space)["complete"] as? Bool == true)
        // A backfill on shard 1 alone.
        let backfill = try await space.run(
            ["--window", "2026-01-01..2026-01-10", "--shard", "1/2"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)\(backfill.stderr)")
        let after = try await Self.reportJSON(space)
        #expect(after["complete"] as? Bool == false, "\(after)")
        let repairLine = try #require(after["next"] as? String, "\(after)")
        #expect((try await Self.run(repairLine, in: space)).status == 0)
        #expect(try await Self.reportJSON(space)["complete"] as? Bool == true)
    }

    @Test(
        "replay --job of the shard whose listing failed sends its own children, not the other shard's"
    )
    func replayOfAShardsFailedFanOut() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sharded-fan-out")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/ids", "query": {"key": "\#(key)"},
                 "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "item-{id}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let items = (1...12).map { #"{"id": \#($0)}"# }
        try RecordsTests.set(key, items, on: space.server)
        #expect(try await space.run(["--shard", "1/2"], backend: "curl").status == 0)
        let theirs = try space.logLines().filter {
            $0["event"] as? String == "request"
                && ($0["task"] as? String)?.hasPrefix("item-") == true
        }.compactMap { $0["task"] as? String }
        try #require(!theirs.isEmpty && theirs.count < 12, "\(theirs)")
        // Shard 0's listing fails: its children are skipped, unknown.
        try RecordsTests.set(key, items, fail: true, on: space.server)
        #expect(try await space.run(["--shard", "0/2"], backend: "curl").status == 1)
        let failed = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).first { $0.contains("shard-0-of-2") })
        // Trial YY: the report lost the skipped children once shard 1's were in the logs.
        let report = try await Self.reportJSON(space)
        #expect(report["complete"] as? Bool == false)
        #expect((report["notDone"] as? Int ?? 0) >= 2, "the listing and its children: \(report)")
        try RecordsTests.set(key, items, on: space.server)
        let replay = try await CourierBinary.run(
            [
                "replay", space.logs.appendingPathComponent("e2e/\(failed)").path, "--job",
                "job.json", "--no-progress",
            ], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        let lines = try space.logLines()
        let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
        let sent = lines.filter {
            $0["run"] as? String == run && $0["event"] as? String == "request"
        }
        .compactMap { $0["task"] as? String }.filter { $0.hasPrefix("item-") }
        // Trial YY: it sent the other shard's children, done seconds before, again.
        #expect(Set(sent).isDisjoint(with: theirs), "\(sent)")
        #expect(sent.count + theirs.count == 12, "\(sent) \(theirs)")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/items").path)
        #expect(saved.count == 12)
    }

    @Test("a shard's failed listing stays in report's count after the other shard's children ran")
    func failedListingThenTheOtherShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sharded-fan-out-first")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/ids", "query": {"key": "\#(key)"},
                 "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "item-{id}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let items = (1...12).map { #"{"id": \#($0)}"# }
        try RecordsTests.set(key, items, fail: true, on: space.server)
        #expect(try await space.run(["--shard", "1/2"], backend: "curl").status == 1)
        try RecordsTests.set(key, items, on: space.server)
        #expect(try await space.run(["--shard", "0/2"], backend: "curl").status == 0)
        // Trial YY: shard 0's children settled shard 1's skipped fan-out, and shard 0's
        // listing the failed one: `report` said complete with shard 1's children never sent.
        let report = try await Self.reportJSON(space)
        #expect(report["complete"] as? Bool == false, "\(report)")
        #expect(report["notDone"] as? Int == 1, "shard 1's children, unknown: \(report)")
        let next = try #require(report["next"] as? String, "\(report)")
        #expect(try await Self.run(next, in: space).status == 0)
        #expect(try await Self.reportJSON(space)["complete"] as? Bool == true)
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/items").path)
        #expect(saved.count == 12)
    }
}
