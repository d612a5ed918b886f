import Foundation

extension JobHistory {
    /// The tasks that runs of the job in `folder` did (their final line there is `ok`), of the
    /// runs that started after the first of `logs` and are not among them: another line's (a
    /// later backfill, a night). A repair of `logs` need not send them again, as `report` and
    /// the summaries count them done (trials TT, VV: a backfill's resume sent windows a later
    /// backfill had fetched, and a task the next night had done).
    /// `siblings`: the other shards of each log's split count too, earlier or not (a replay of
    /// one shard's log walks the whole fan-out; trial YY: it sent the other shard's children
    /// done seconds before).
    static func doneLater(than logs: [String], folder: URL, siblings: Bool = false) -> Set<UInt64> {
        let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
        let names = Set(logs.map(name))
        guard let first = logs.compactMap({ LogFiles.firstLine(of: $0)?.time }).min() else {
            return []
        }
        let all = starts(in: folder)
        var others = all.filter { $0.time > first && !names.contains(name($0.path)) }
        if siblings {
            for start in all where names.contains(name(start.path)) {
                others += split(of: start, among: all).filter { !names.contains(name($0.path)) }
            }
        }
        let paths = Array(Set(others.map(\.path)))
        guard !paths.isEmpty else { return [] }
        return TaskHistory.read(paths, warn: { _ in }).done
    }
}
