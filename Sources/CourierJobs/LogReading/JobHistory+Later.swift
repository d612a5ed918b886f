import Foundation

extension JobHistory {
    /// The tasks that runs of the job in `folder` did (their final line there is `ok`), of the
    /// runs that started after the first of `logs` and are not among them: another line's (a
    /// later backfill, a night). A repair of `logs` need not send them again, as `report` and
    /// the summaries count them done (trials TT, VV: a backfill's resume sent windows a later
    /// backfill had fetched, and a task the next night had done).
    static func doneLater(than logs: [String], folder: URL) -> Set<UInt64> {
        let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
        let names = Set(logs.map(name))
        guard let first = logs.compactMap({ LogFiles.firstLine(of: $0)?.time }).min() else {
            return []
        }
        let later = starts(in: folder).filter { $0.time > first && !names.contains(name($0.path)) }
        guard !later.isEmpty else { return [] }
        return TaskHistory.read(later.map(\.path), warn: { _ in }).done
    }
}
