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
            if let refusal = named.lazy.compactMap({ refusal(of: $0, for: job) }).first
                ?? elsewhere(named, job: job, folder: folder)
            {
                return .failure(refusal)
            }
            // A shard's log brings the rest of its split: the resume walks the whole job.
            let named = JobHistory.withSplits(named, folder: folder)
            // The named logs' chain, and the repairs of it made since (``LogFiles/continuations``).
            let since = LogFiles.continuations(of: LogFiles.chain(of: named), in: folder)
            var (history, own) = LogFiles.resumeState(
                from: named + since.map { URL(fileURLWithPath: $0) }, keepRunsOf: capturing,
                warn: warn)
            // A write the job's history says was answered (or left under way) is not sent
            // again because the logs named leave it out (trial R: a log cut short sent a
            // charge twice).
            // The named logs' own folder too, when `--log-dir` names another (trial HHH: a
            // write a resume had made there was made again).
            let theirs = named.map { $0.deletingLastPathComponent() }.filter {
                $0.lastPathComponent == job.name
            }
            if var writes = JobHistory.writes(folders: [folder] + theirs, with: history.logs) {
                // The keys the night's own writes went out with are the named logs'.
                writes.nightKeys = history.writes.nightKeys
                history.writes = writes
            }
            // What another line did since is done too. (Its own done tasks whose records are
            // older than their file are then fetched again all the same: ``RecordsStore/staleParts(of:runs:done:)``.)
            // With the records they kept, which a resume counts (`minRecords`; trial PPP).
            var kept: [UInt64: Int] = [:]
            let later = JobHistory.doneLater(than: history.logs, own: own, folder: folder) {
                kept[$0] = $1
            }
            history.done.formUnion(later)
            history.recordsKept.merge(kept) { _, later in later }
            return .success(history)
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
                TaskHistory.read(
                    history.logs, keepRunsOf: capturing, keepSaves: true, warn: warn),
                logs: history.logs))
    }

    /// Why a repair of logs in the job's history `theirs` may not log in `folder`, another
    /// one (`--log-dir`): a later repair of that night reads `theirs`, and would not see what
    /// this one sent (trial JJJ: a replay made again the write such a resume had made).
    static func elsewhere(_ named: [URL], job: Job, folder: URL) -> Refusal? {
        let own = folder.standardizedFileURL.path
        // Each log's folder, or for a copy the one its `run.start` says it was written in.
        let folders = named.map { log in
            let parent = log.deletingLastPathComponent().standardizedFileURL
            guard parent.lastPathComponent != job.name,
                let written = LogFiles.firstLine(of: log.path)?.runFields?.logDir,
                FileManager.default.fileExists(atPath: written)
            else { return parent }
            return URL(fileURLWithPath: written).standardizedFileURL
        }
        guard
            let theirs = folders.first(where: {
                $0.lastPathComponent == job.name && $0.path != own
            })
        else { return nil }
        return Refusal(
            message:
                "--resume: the logs named are in the job's history \(theirs.path), and this run would log in \(own): a later repair of that night would not see what it sent; give --log-dir \(ShellWord.quoted(theirs.deletingLastPathComponent().path)); nothing was sent",
            ofJob: true)
    }

    /// Why a log `--resume` names cannot be resumed from: it is not there, holds no courier
    /// log (an empty or cut file, not a log: it would count every task as never run, writes
    /// too), or is another job's.
    private static func refusal(of log: URL, for job: Job) -> Refusal? {
        let name = log.relativePath
        guard FileManager.default.fileExists(atPath: log.path) else {
            return Refusal(message: "--resume: \(name): no such log", ofJob: false)
        }
        guard let first = LogFiles.firstLine(of: log.path), first.event == LogEvent.runStart
        else {
            return Refusal(
                message:
                    "--resume: \(name): not a courier log (its first line is no run.start); nothing was sent",
                ofJob: false)
        }
        guard first.job == job.name else {
            return Refusal(
                message:
                    "--resume: \(name) is a log of job '\(first.job)', not of '\(job.name)'; nothing was sent",
                ofJob: false)
        }
        return nil
    }

    /// What a `run --task` run finds in the job's history: which tasks that capture kept
    /// their values, which stand in for sending them again, and what became of its writes.
    static func kept(by job: Job, folder: URL) -> RunHistory {
        let logs = JobHistory.read(folder: folder).logs
        return RunHistory(
            TaskHistory.read(
                logs, keepRunsOf: TaskHistory.capturingTasks(of: job), keepSaves: true,
                warn: { _ in }),
            logs: logs)
    }
}
