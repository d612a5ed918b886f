import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Another job file of the same name whose history is in the log folder this job's would be.
///
/// A job's history (its log folder), outputs and lock are found by its name. Two job files of
/// one name would share them: a trial's `b.json --resume` took `a.json`'s failed night as its
/// own, sent nothing of its own and left `a.json`'s answer as its saved file. So a run, a
/// resume or a `replay --job` refuses when the newest log in its folder is another job file's
/// that is still there and still of that name; one moved away, or given another name, leaves its history to the file that takes
/// its place.
enum OtherJobFile {
    /// The refusal, or `nil` when the newest log is this file's, names no file (a job read
    /// from standard input, an older log), or names one that is gone or is this very file
    /// by another path (a symbolic link).
    static func refusal(for job: Job, logFolder: URL) -> String? {
        guard job.file != JobDecoder.standardInput,
            let start = newestStart(in: logFolder.path), let other = start.runFields?.jobPath,
            other != job.file.standardizedFileURL.path,
            let theirs = identity(of: other), theirs != identity(of: job.file.path),
            // Renamed since, that file is another job now (trial III: still refused).
            JobHome.logFolder(ofJobFile: URL(fileURLWithPath: other))?.lastPathComponent
                == job.name
        else { return nil }
        return
            "\(logFolder.path) holds the history of another job file of the same name, \(other) (run \(start.run)): a job's history, outputs and lock go by its name, so each job file needs its own \"name\" (or run \(ShellWord.quoted(other)), or move it away if this file replaces it); nothing was sent"
    }

    /// The `run.start` of the newest log in `folder` that names its job file (log names start
    /// with their run's start time): a replay of a log alone, or a job read from standard
    /// input, names none, and says nothing of whose history it is (trial JJJ: such a replay
    /// in between let another file take the history).
    private static func newestStart(in folder: String) -> LogLine? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names.filter({ $0.hasSuffix(".jsonl") }).sorted().reversed() {
            let path = (folder as NSString).appendingPathComponent(name)
            if let start = LogFiles.firstLine(of: path), start.runFields?.jobPath != nil {
                return start
            }
        }
        return nil
    }

    /// The file's device and inode, `nil` when there is no such file.
    private static func identity(of path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }
}
