import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension RecordsStore {
    /// The tasks of `runs` that `done` counts as done whose records wait in a part older than
    /// their `merge` file: a run wrote the file after the part was made (a night between a
    /// failed backfill and its resume), so the part's records may be older than the file's,
    /// and merging it would put them back over the newer ones (trial NN: a record a night had
    /// updated went back to the backfill's copy). A resume fetches these tasks again.
    ///
    /// A folder with a `commit` record is left to the commit that finishes it: its parts may be
    /// in the file already (``RecordsCommit``).
    func staleParts(of job: Job, runs: [String], done: Set<UInt64>) -> Set<UInt64> {
        let runs = Set(runs)
        var targets = Set<String>()
        for spec in job.tasks {
            guard let rule = spec.records, rule.write == .merge else { continue }
            let template = Template(rule.to)
            guard template.variables.isEmpty else { continue }
            targets.insert(RecordsRule.canonical(template.render([:])))
        }
        var stale = Set<UInt64>()
        for target in targets {
            let folder = folder(for: target)
            guard
                let written = Self.modified(outputDir.appendingPathComponent(target).path),
                let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path),
                !names.contains(Self.commitName)
            else { continue }
            for name in names {
                guard let (key, run) = Self.parsePartName(name), runs.contains(run),
                    done.contains(key),
                    let made = Self.modified(folder.appendingPathComponent(name).path),
                    made.lexicographicallyPrecedes(written)
                else { continue }
                stale.insert(key)
            }
        }
        return stale
    }

    /// Whether the file at `url` (a part, a listing's records) was last written before the
    /// records file `target` was: what it holds may be older than the file's.
    func isOlder(_ url: URL, than target: String) -> Bool {
        guard let made = Self.modified(url.path),
            let written = Self.modified(outputDir.appendingPathComponent(target).path)
        else { return false }
        return made.lexicographicallyPrecedes(written)
    }

    /// When the file at `path` was last changed, as seconds and nanoseconds; `nil` when there
    /// is none.
    private static func modified(_ path: String) -> [Int]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
            let time = status.st_mtimespec
        #else
            let time = status.st_mtim
        #endif
        return [Int(time.tv_sec), Int(time.tv_nsec)]
    }
}
