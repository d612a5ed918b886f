import Foundation

/// `replay --job` of a backfill (`run --window`): the job is read with the backfill's range,
/// which the replayed run logged, as `run --resume` reads it (``RunCommand/resumedWindow``).
/// Read with its own windows, the job's tasks were not the backfill's: the records file was
/// held for a window outside the range, and the replay said every task was done (trial JJ).
extension ReplayCommand {
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
