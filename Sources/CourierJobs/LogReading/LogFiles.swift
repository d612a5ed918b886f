import Foundation

/// Finding and ordering log files.
enum LogFiles {
    /// The files in the order their runs started (by the `ts` of their first line), so that a
    /// later run's word on a task wins whatever order the command line gave. Files whose first
    /// line cannot be read keep their place before the others; standard input comes last.
    static func ordered(_ paths: [String]) -> [String] {
        let stdin = paths.filter { $0 == "-" }
        let files = expandingFolders(paths.filter { $0 != "-" }).enumerated().map { index, path in
            (path, firstLine(of: path)?.time ?? -Double.infinity, index)
        }
        let sorted = files.sorted { ($0.1, $0.2) < ($1.1, $1.2) }.map(\.0)
        return sorted + stdin
    }

    /// `paths` with each folder replaced by the `.jsonl` files under it, at any depth (`logs/`
    /// holds a folder per job): "report on these logs" usually means a folder of them. A job
    /// file (`.json`, a JSON object with a `name`) stands for its log folder, `logs/<name>` in
    /// its home: the file a newcomer has at hand.
    static func expandingFolders(_ paths: [String]) -> [String] {
        paths.flatMap { given -> [String] in
            var path = given
            if given.hasSuffix(".json"),
                let folder = JobHome.logFolder(ofJobFile: URL(fileURLWithPath: given))
            {
                path = folder.relativePath
            }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder),
                isFolder.boolValue
            else { return [path] }
            let folder = URL(fileURLWithPath: path)
            let found =
                FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
            return found.filter { $0.hasSuffix(".jsonl") }.sorted().map {
                folder.appendingPathComponent($0).path
            }
        }
    }

    /// The `run.start` line of a file: its first log line, read with the one reader (which
    /// stops after its first chunk here).
    static func firstLine(of path: String) -> LogLine? {
        var lines = LogReader(paths: [path], warn: { _ in }).makeIterator()
        return lines.next()?.line
    }

    /// Whether the log's last line is its `run.end` (a killed run's log has none): read from
    /// the end, not the whole file.
    static func endsWithRunEnd(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { return false }
        let tail = min(size, 64 << 10)
        try? handle.seek(toOffset: size - tail)
        guard let data = try? handle.readToEnd() else { return false }
        let lines = data.split(separator: 0x0A)
        return lines.last?.starts(with: Array(#"{"event":"run.end""#.utf8)) == true
    }

    /// The logs in `folder` that went on from `logs`: resumes whose `resumedFrom` names one of
    /// them, replays with `--job` whose `replayOf` names one of their runs, and in turn those
    /// that went on from these (known by file name, which holds the run's time and id, so that
    /// a log named from another folder is found all the same). A resume naming a log reads them
    /// too: a repair of that log already made is not made again (trial U: a second
    /// `--resume LOG` fetched again all that the first had done).
    static func continuations(of logs: [String], in folder: URL) -> [String] {
        let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
        var names = Set(logs.map(name))
        var runs = Set(logs.compactMap { firstLine(of: $0)?.run })
        var others = expandingFolders([folder.path]).filter { !names.contains(name($0)) }
            .compactMap { path in firstLine(of: path).map { (path, $0) } }
            .filter { $0.1.event == LogEvent.runStart && $0.1.replayFrom != "log" }
        var found: [String] = []
        while let index = others.firstIndex(where: { _, first in
            first.resumedFrom.contains { names.contains(name($0)) }
                || first.replayOf.contains(where: runs.contains)
        }) {
            let (path, first) = others.remove(at: index)
            names.insert(name(path))
            runs.insert(first.run)
            found.append(path)
        }
        return found
    }

    /// `given` and every log each resumed from (a resumed run's `run.start` lists them all,
    /// so one level is the whole chain), as absolute paths, so that a later resume from
    /// another folder still finds them. Each once, known by its file name (a log named both
    /// as given and as a resume's `resumedFrom`, spelt another way, is read once).
    static func chain(of given: [URL]) -> [String] {
        var logs: [String] = []
        var names: Set<String> = []
        for log in given {
            let earlier = firstLine(of: log.path)?.resumedFrom ?? []
            for path in earlier + [log.standardizedFileURL.path]
            where names.insert(URL(fileURLWithPath: path).lastPathComponent).inserted {
                logs.append(path)
            }
        }
        return logs
    }

    /// What `--resume` skips: the tasks done according to the logs of ``chain(of:)``. Several
    /// logs (every shard's) are read together. `finals`: the final lines of the tasks not done,
    /// which say what each last sent (``JobHistory/doneLater(than:own:folder:siblings:)``).
    static func resumeState(
        from given: [URL], keepRunsOf: [String] = [], warn: @escaping (String) -> Void
    ) -> (history: RunHistory, finals: [UInt64: LogLine]) {
        let logs = chain(of: given)
        let read = TaskHistory.read(logs, keepRunsOf: keepRunsOf, keepSaves: true, warn: warn)
        return (RunHistory(read, logs: LogFiles.ordered(logs)), read.finals)
    }
}
