import Foundation

extension JobHistory {
    /// The runs of the split `run` is a shard of: the plain runs of the same shard count over
    /// the same windows (the job's own, or the same backfill range), and of the same
    /// `--once-per` key when it has one, taken in the order they started as rounds, a round
    /// ending where a shard comes again (a night's shards, then the next night's); of `run`'s
    /// round, those nearer in time to `run` than to any other run of `run`'s own shard. The
    /// shards of a `run --task` are the runs of the same tasks chosen. `[run]` for a run of
    /// the whole job, a resume or a replay.
    ///
    /// A resume that names one shard's log walks the whole job: without the split's other
    /// logs it would fetch every task the other shards did again, and the report would still
    /// count a killed shard as unfinished after it (trial TT). A night that ran on one shard
    /// is a split of one, not last night's other shard and tonight's (trials VV, XX: `report`
    /// said complete with windows never fetched).
    static func split(of run: RunStart, among starts: [RunStart]) -> [RunStart] {
        guard let shard = run.shard, !run.completesEarlier || !run.chosen.isEmpty else {
            return [run]
        }
        let kind = starts.filter {
            $0.path == run.path
                || ($0.completesEarlier == run.completesEarlier && $0.chosen == run.chosen
                    && $0.shard?.count == shard.count && $0.window == run.window
                    && $0.oncePer == run.oncePer)
        }.sorted { ($0.time, $0.path) < ($1.time, $1.path) }
        var round: [RunStart] = []
        var seen = Set<Int>()
        for start in kind {
            guard let index = start.shard?.index else { continue }
            if seen.contains(index) {
                if round.contains(where: { $0.path == run.path }) { break }
                round = []
                seen = []
            }
            round.append(start)
            seen.insert(index)
        }
        let own = kind.filter { $0.shard?.index == shard.index && $0.path != run.path }
        return round.filter { peer in
            peer.path == run.path
                || !own.contains { abs(peer.time - $0.time) <= abs(peer.time - run.time) }
        }
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
