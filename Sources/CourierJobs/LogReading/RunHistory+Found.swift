import Foundation

/// The history a run completes, found where the command line says: the logs `--resume`
/// names (and those they resumed from), or the job's own history in its log folder. `run`'s
/// start prints what these return, and reads no log for it itself.
extension RunHistory {
    /// Why `--resume` cannot start (nothing is sent): a named log that is not there, or no
    /// history at all. `ofJob`: the message is about the job (printed after its name).
    struct Refusal: Error {
        var message: String
        var ofJob: Bool
    }

    /// What `--resume` completes: the `named` logs' history, or else the job's (its latest
    /// plain run, every shard's, and the resumes and replays since; docs/log-format.md, "One
    /// history per job"). `nil` when the job has none and `fresh` (`--fresh-if-no-history`)
    /// runs every task then; refused when it has none and `fresh` is not given: a repair
    /// that finds nothing to repair must not pass for one (run from another folder, it would
    /// fetch everything into the wrong place and say "every task done").
    static func resuming(
        _ job: Job, folder: URL, named: [URL], fresh: Bool, warn: @escaping (String) -> Void
    ) -> Result<RunHistory?, Refusal> {
        let capturing = TaskHistory.capturingTasks(of: job)
        if !named.isEmpty {
            if let missing = named.first(where: { !FileManager.default.fileExists(atPath: $0.path) }
            ) {
                return .failure(
                    Refusal(message: "--resume: \(missing.relativePath): no such log", ofJob: false)
                )
            }
            return .success(LogFiles.resumeState(from: named, keepRunsOf: capturing, warn: warn))
        }
        let history = JobHistory.read(folder: folder)
        guard !history.logs.isEmpty else {
            if fresh { return .success(nil) }
            return .failure(
                Refusal(
                    message:
                        "--resume: no earlier run of this job in \(folder.path); nothing was sent (run without --resume to start fresh, or add --fresh-if-no-history)",
                    ofJob: true))
        }
        return .success(
            RunHistory(
                TaskHistory.read(history.logs, keepRunsOf: capturing, warn: warn),
                logs: history.logs))
    }

    /// What a `run --task` run finds in the job's history: which tasks that capture kept
    /// their values, which stand in for sending them again, and what became of its writes.
    static func kept(by job: Job, folder: URL) -> RunHistory {
        let logs = JobHistory.read(folder: folder).logs
        return RunHistory(
            TaskHistory.read(
                logs, keepRunsOf: TaskHistory.capturingTasks(of: job), warn: { _ in }),
            logs: logs)
    }
}
