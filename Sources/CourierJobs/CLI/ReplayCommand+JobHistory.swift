import Foundation

/// What `replay --job` reads: the job's history when no log is named, and the job with the
/// range of a backfill it replays.
extension ReplayCommand {
    /// `--job` alone: the logs of the job's own history, as `run --resume` reads it; `false`
    /// (said) when there are none.
    static func historyLogs(of job: Job, options: inout Options, console: Console) -> Bool {
        let folder =
            (options.logDirectoryGiven ? options.run.logDirectory : job.home.logs)
            .appendingPathComponent(job.name)
        options.logs = JobHistory.read(folder: folder).logs
        guard options.logs.isEmpty else { return true }
        console.error(
            "courier: \(job.name): no earlier run of this job in \(folder.path); nothing to replay")
        return false
    }

    /// A backfill (`run --window`) is replayed with the job read with its range, which the
    /// replayed run logged, as `run --resume` reads it (``RunCommand/resumedWindow``). Read
    /// with its own windows, the job's tasks were not the backfill's: the records file was held
    /// for a window outside the range, and the replay said every task was done (trial JJ).
    /// Reads `job` again with the window the first replayed log's run logged, if it logged
    /// one; an exit code when the job no longer reads.
    static func backfillWindow(
        _ job: inout Job?, path: String, options: inout Options, console: Console
    ) -> Int32? {
        guard job != nil, let first = options.logs.first,
            let start = LogFiles.firstLine(of: first), let logged = start.runFields?.window,
            let window = WindowOverride(logged)
        else { return nil }
        guard let reloaded = loadJob(path, options: options, window: window) else {
            return CommandLineInterface.ExitCode.usage
        }
        job = reloaded
        options.run.window = logged
        console.error(
            "courier: \(reloaded.name): replaying run \(start.run), the backfill --window \(logged)"
        )
        return nil
    }
}
