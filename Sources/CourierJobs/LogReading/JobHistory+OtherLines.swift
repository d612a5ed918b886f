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
        /// Tasks of the line, done, whose records wait in parts outside their file (it was
        /// held when they ran, and no run of the line wrote it since).
        var held = 0
        /// A run of the line was cut (killed) before it reached every task, or a shard of it
        /// never ran, and no resume of the line that ended went on from it: the tasks it never
        /// reached have no line, and ``notDone`` does not count them (trial TT: a killed
        /// backfill read as "0 tasks not done"; trial UU: a missing shard, as none).
        var unfinished = false
        /// Every log of the line, its first as ``log``.
        var logs: [String] = []
    }

    /// The other lines that left tasks not done, the night's first, then every backfill's,
    /// oldest first. A backfill is a run of its own range: the next night starts the history
    /// afresh without it, and until then the history is the backfill alone, so the other
    /// line's failures went unsaid by `--resume` and `report` (trials NN, PP), an older failed
    /// backfill's too once a newer one came (trial RR). The logs are read together, in run
    /// order: a task a later run did in any line (a backfill that fetched a night's failed
    /// window, a night one of a backfill's) is done.
    /// `records`: the job's `outputDir/.courier/records`, whose parts a line's runs left
    /// count too: a line whose tasks are all done may not have written its file (trial SS: a
    /// backfill did the night's failed window, and the night's other windows' records stayed
    /// in their parts while everything said complete).
    static func otherLines(folder: URL, current: String? = nil, records: URL? = nil)
        -> [OtherLine]
    {
        let all = starts(in: folder, current: current)
        let plain = all.filter { !$0.completesEarlier }.sorted {
            ($0.time, $0.path) < ($1.time, $1.path)
        }
        guard let newest = plain.last else { return [] }
        let main = select(all).logs
        var lines: [(logs: [String], window: String?, cut: Bool)] = []
        if newest.backfill {
            let night = select(all.filter { !$0.backfill })
            if !night.logs.isEmpty { lines.append((night.logs, nil, !night.whole)) }
        }
        // A sharded backfill is one line: its split's logs (``split(of:among:)``).
        var named: [String: RunStart] = [:]
        for start in all { named[URL(fileURLWithPath: start.path).lastPathComponent] = start }
        var taken = Set<String>()
        for root in plain where root.backfill && !main.contains(root.path) {
            guard !taken.contains(root.path) else { continue }
            let split = split(of: root, among: all)
            taken.formUnion(split.map(\.path))
            let logs = split.map(\.path) + LogFiles.continuations(of: split.map(\.path), in: folder)
            let runs = logs.compactMap { named[URL(fileURLWithPath: $0).lastPathComponent] }
            // Cut, or a shard of it never ran (trial UU: forgotten once a night ran), unless a
            // resume of the whole range ended since.
            let resumed = runs.contains { $0.walksAll && $0.ended && $0.shard == nil }
            let reached =
                split.count == (root.shard?.count ?? 1)
                && split.allSatisfy { isCovered($0, by: runs) }
            lines.append((logs, root.window, !resumed && !reached))
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
        var held = [Int](repeating: 0, count: lines.count)
        for run in records.map(heldParts(in:)) ?? [] {
            if let index = lineOfRun[run] { held[index] += 1 }
        }
        return lines.indices.filter { counts[$0] > 0 || held[$0] > 0 || lines[$0].cut }.map {
            OtherLine(
                log: lines[$0].logs[0], notDone: counts[$0], window: lines[$0].window,
                held: held[$0], unfinished: lines[$0].cut, logs: lines[$0].logs)
        }
    }

    /// The run of each records part in `root` (`ID/KEY.RUN.part`), once a part.
    private static func heldParts(in root: URL) -> [String] {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return folders.flatMap { folder -> [String] in
            let names =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent(folder).path)) ?? []
            return names.compactMap { name in
                let fields = name.split(separator: ".")
                guard !name.hasPrefix("."), fields.count == 3, fields[2] == "part" else {
                    return nil
                }
                return String(fields[1])
            }
        }
    }
}

extension JobHistory.OtherLine {
    /// What a summary and `report` say of it, with `resume`, the command that completes it.
    func note(resume: String) -> String {
        let which =
            window.map { "the backfill --window \($0)" }
            ?? "the run over the job's own windows before the backfill"
        let tasks = { (count: Int) in "\(count) task\(count == 1 ? "" : "s")" }
        var said: [String] = []
        if notDone > 0 {
            said.append("left \(tasks(notDone)) not done")
        } else if held > 0 {
            said.append("left the records of \(tasks(held)) out of their file")
        }
        if unfinished {
            said.append("did not reach every task (a run cut short, or a shard not run)")
        }
        return "\(which) \(said.joined(separator: " and ")) (`\(resume)` completes it)"
    }
}
