import Foundation

extension JobHistory {
    /// Of the tasks `logs` leave not done (their final lines there, `own`), those a run of the
    /// job in `folder` that started after the first of `logs` and is not among them did with
    /// the same request (its `ok` line's method and URL are those of the task's final line in
    /// `logs`), and that are no writes: another line's (a later backfill's window, a task the
    /// next night did). A repair of `logs` need not send them again, as `report` counts them
    /// done (trials TT, VV). Only the same request: a later night's write (another body,
    /// another key) or a GET of another day's URL under the same id is not this one (trial ZZ:
    /// a write the server never took was dropped because the next night's succeeded).
    /// `siblings`: the other shards of each log's split count too, earlier or not (a replay of
    /// one shard's log walks the whole fan-out; trial YY: it sent the other shard's children
    /// done seconds before); their tasks count by id, being of the same night.
    /// `kept` is told the records each done task's `ok` line says it kept (`recordsKept`).
    static func doneLater(
        than logs: [String], own: [UInt64: LogLine], folder: URL, siblings: Bool = false,
        kept: (UInt64, Int) -> Void = { _, _ in }
    ) -> Set<UInt64> {
        let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
        let names = Set(logs.map(name))
        guard let first = logs.compactMap({ LogFiles.firstLine(of: $0)?.time }).min() else {
            return []
        }
        let all = starts(in: folder)
        let later = all.filter { $0.time > first && !names.contains(name($0.path)) }.map(\.path)
        var done = Set<UInt64>()
        if !later.isEmpty {
            let read = TaskHistory.read(later, keepAllFinals: true, warn: { _ in })
            for (key, line) in read.finals where line.outcome == LogOutcome.ok.rawValue {
                guard read.writes.facts[key] == nil, let mine = own[key], mine.url != nil,
                    mine.url == line.url, mine.method == line.method
                else { continue }
                done.insert(key)
                if let records = line.recordsKept { kept(key, records) }
            }
        }
        if siblings {
            var peers: [String] = []
            for start in all where names.contains(name(start.path)) {
                peers += split(of: start, among: all).map(\.path).filter {
                    !names.contains(name($0))
                }
            }
            if !peers.isEmpty {
                let read = TaskHistory.read(Array(Set(peers)), warn: { _ in })
                let peersDone = read.done.subtracting(read.writes.facts.keys)
                done.formUnion(peersDone)
                for key in peersDone { read.recordsKept[key].map { kept(key, $0) } }
            }
        }
        return done
    }
}
