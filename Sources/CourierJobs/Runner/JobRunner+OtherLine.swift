import Foundation

extension JobRunner {
    /// A run of another line than the job's history (a backfill's repair after the next
    /// night): what the history lacks is not this run's to say (trials RR, XX: a failed repair
    /// of a backfill read "the job's history: every task done", with no repair of its own).
    /// Its own line's note says what it lacks; a failed run's own repair line says it instead.
    func ownLine(_ summary: inout RunSummary, log: URL) {
        let name = log.lastPathComponent
        guard
            let own = summary.otherLines.firstIndex(where: { line in
                line.logs.contains { URL(fileURLWithPath: $0).lastPathComponent == name }
            })
        else { return }
        summary.missing = nil
        if summary.failed > 0 { summary.otherLines.remove(at: own) }
    }

    /// A resume of a night older than the job's history (its latest plain run): what the
    /// history lacks is not its to say, and its repair resumes the night's log again.
    func olderNight(_ summary: inout RunSummary) {
        guard let root = options.resume?.logs.first,
            JobHistory.precedes(root, folder: options.logDirectory.appendingPathComponent(job.name))
        else { return }
        (summary.missing, summary.repairLog) = (nil, root)
    }
}
