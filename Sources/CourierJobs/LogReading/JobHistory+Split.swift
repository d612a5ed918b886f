import Foundation

extension JobHistory {
    /// The runs of the split `run` is a shard of: for each other shard of its count, the plain
    /// run of that shard over the same windows (the job's own, or the same backfill range)
    /// nearest `run` in time, of those nearer `run` than any other run of `run`'s own shard
    /// (its night's, not the last's or the next's). The shards of a `run --task` are the
    /// runs of the same tasks chosen. `[run]` for a run of the whole job, a resume or a
    /// replay.
    ///
    /// A resume that names one shard's log walks the whole job: without the split's other
    /// logs it would fetch every task the other shards did again, and the report would still
    /// count a killed shard as unfinished after it (trial TT: a sharded backfill whose
    /// killed shard nothing went on from, its repair printed and run for ever).
    static func split(of run: RunStart, among starts: [RunStart]) -> [RunStart] {
        guard let shard = run.shard, !run.completesEarlier || !run.chosen.isEmpty else {
            return [run]
        }
        let peers = starts.filter {
            $0.completesEarlier == run.completesEarlier && $0.chosen == run.chosen
                && $0.shard?.count == shard.count && $0.window == run.window && $0.path != run.path
        }
        let own = peers.filter { $0.shard?.index == shard.index }
        var chosen: [Int: RunStart] = [shard.index: run]
        for peer in peers {
            guard let index = peer.shard?.index, index != shard.index else { continue }
            let distance = abs(peer.time - run.time)
            guard !own.contains(where: { abs(peer.time - $0.time) < distance }) else { continue }
            if let current = chosen[index], abs(current.time - run.time) <= distance { continue }
            chosen[index] = peer
        }
        return chosen.values.sorted { ($0.time, $0.path) < ($1.time, $1.path) }
    }

    /// `named` (logs a resume names) and the logs of the other shards of each one's split
    /// (``split(of:among:)``), among the logs in `folder`, each once, in the order given.
    static func withSplits(_ named: [URL], folder: URL) -> [URL] {
        let all = starts(in: folder)
        var byName: [String: RunStart] = [:]
        for start in all { byName[URL(fileURLWithPath: start.path).lastPathComponent] = start }
        var seen = Set(named.map(\.lastPathComponent))
        var logs = named
        for log in named {
            guard let start = byName[log.lastPathComponent] else { continue }
            for peer in split(of: start, among: all)
            where seen.insert(URL(fileURLWithPath: peer.path).lastPathComponent).inserted {
                logs.append(URL(fileURLWithPath: peer.path))
            }
        }
        return logs
    }
}
