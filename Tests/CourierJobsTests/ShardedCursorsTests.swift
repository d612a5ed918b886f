@testable import CourierJobs
import Testing

/// The cursor of a `since` listing every shard runs: each shard keeps its own entry, and a run
/// starts from the least of them (``ShardedCursors``).
@Suite("sharded since cursors")
struct ShardedCursorsTests {
    static func resolve(
        _ file: [String: String], shard: String?, ordered: Bool = true
    ) -> String? {
        ShardedCursors.resolved(
            file, everyShard: ["sync"], ordered: ordered ? ["sync"] : [],
            shard: shard.flatMap(Shard.init))["sync"]
    }

    @Test("a shard starts from the least of its split's entries, its own entry for one missing")
    func leastOfTheSplit() {
        let file = [
            "sync": "2026-01-01T00:00:01Z", "sync#shard=0/2": "2026-01-01T00:00:08Z",
            "sync#shard=1/2": "2026-01-01T00:00:05Z", "other": "7",
        ]
        #expect(Self.resolve(file, shard: "0/2") == "2026-01-01T00:00:05Z")
        #expect(Self.resolve(file, shard: "1/2") == "2026-01-01T00:00:05Z")
        // A split of three has no entries yet: the task's own entry.
        #expect(Self.resolve(file, shard: "2/3") == "2026-01-01T00:00:01Z")
        var missing = file
        missing["sync#shard=1/2"] = nil
        #expect(Self.resolve(missing, shard: "0/2") == "2026-01-01T00:00:01Z")
        missing["sync"] = nil
        #expect(Self.resolve(missing, shard: "0/2") == nil, "from the task's start")
        let resolved = ShardedCursors.resolved(
            file, everyShard: ["sync"], ordered: ["sync"], shard: Shard("0/2"))
        #expect(resolved["other"] == "7")
        #expect(resolved.keys.allSatisfy { !$0.contains("#shard=") })
    }

    @Test("a whole-job run takes the shards' entries only when every shard of a split has one")
    func wholeJobRun() {
        var file = ["sync": "10", "sync#shard=0/2": "30", "sync#shard=1/2": "20"]
        #expect(Self.resolve(file, shard: nil) == "20")
        file["sync#shard=1/2"] = nil
        #expect(Self.resolve(file, shard: nil) == "10")
        #expect(ShardedCursors.superseded(by: "sync", in: file) == ["sync#shard=0/2"])
    }

    @Test("tokens that cannot be ordered and differ give the task's own entry")
    func unorderedTokens() {
        let file = ["sync": "a", "sync#shard=0/2": "c", "sync#shard=1/2": "b"]
        #expect(Self.resolve(file, shard: "0/2", ordered: false) == "a")
        let same = ["sync#shard=0/2": "c", "sync#shard=1/2": "c"]
        #expect(Self.resolve(same, shard: "1/2", ordered: false) == "c")
    }
}
