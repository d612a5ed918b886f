import Foundation

extension JobHistory {
    /// A line of runs the job's history does not see, which left tasks not done: the runs
    /// over the job's own windows before a backfill that is the latest plain run, or a
    /// backfill (`run --window`) before the latest plain run, each with its resumes and
    /// replays.
    struct OtherLine: Equatable, Sendable {
        /// The line's first log: what `--resume LOG` of it names.
        var log: String
        var notDone: Int
        /// A backfill's range, `nil` for the runs over the job's own windows.
        var window: String?
    }

    /// The other lines that left tasks not done, the night's first, then every backfill's,
    /// oldest first. A backfill is a run of its own range: the next night starts the history
    /// afresh without it, and until then the history is the backfill alone, so the other
    /// line's failures went unsaid by `--resume` and `report` (trials NN, PP), an older failed
    /// backfill's too once a newer one came (trial RR). The logs are read together, in run
    /// order: a task a later run did in any line (a backfill that fetched a night's failed
    /// window, a night one of a backfill's) is done.
    static func otherLines(folder: URL, current: String? = nil) -> [OtherLine] {
        let all = starts(in: folder, current: current)
        let plain = all.filter { !$0.completesEarlier }.sorted {
            ($0.time, $0.path) < ($1.time, $1.path)
        }
        guard let newest = plain.last else { return [] }
        let main = select(all).logs
        var lines: [(logs: [String], window: String?)] = []
        if newest.backfill {
            let night = select(all.filter { !$0.backfill }).logs
            if !night.isEmpty { lines.append((night, nil)) }
        }
        for root in plain where root.backfill && !main.contains(root.path) {
            lines.append(
                ([root.path] + LogFiles.continuations(of: [root.path], in: folder), root.window))
        }
        guard !lines.isEmpty else { return [] }
        let finals = TaskHistory.read(
            Array(Set(main + lines.flatMap(\.logs))), warn: { _ in }
        ).finals
        var lineOfRun: [String: Int] = [:]
        for (index, line) in lines.enumerated() {
            for log in line.logs {
                if let run = LogFiles.firstLine(of: log)?.run, lineOfRun[run] == nil {
                    lineOfRun[run] = index
                }
            }
        }
        var counts = [Int](repeating: 0, count: lines.count)
        for line in finals.values {
            if let index = lineOfRun[line.run] { counts[index] += 1 }
        }
        return lines.indices.filter { counts[$0] > 0 }.map {
            OtherLine(log: lines[$0].logs[0], notDone: counts[$0], window: lines[$0].window)
        }
    }
}

extension JobHistory.OtherLine {
    /// What a summary and `report` say of it, with `resume`, the command that completes it.
    func note(resume: String) -> String {
        let which =
            window.map { "the backfill --window \($0)" }
            ?? "the run over the job's own windows before the backfill"
        return
            "\(which) left \(notDone) task\(notDone == 1 ? "" : "s") not done (`\(resume)` completes it)"
    }
}
