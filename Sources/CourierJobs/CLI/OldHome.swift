import Foundation

/// What a job that ran before jobs had homes left in the working folder.
///
/// In courier 0.1 a job's `outputDir` and its logs were taken from the working folder. A job run
/// from a folder other than its file's kept them there; under the home rule (``JobHome``) the
/// same command would start a second, empty history in the home, fetch everything again and
/// leave the first one stale. So a run, a resume or a `replay --job` that finds the job's
/// history or outputs in the working folder and none in its home refuses, and says the two
/// commands that move them (or how to keep them where they are).
enum OldHome {
    /// The refusal, or nil when nothing would be stranded: the home is the working folder, or
    /// the working folder holds nothing of this job's, or the home already has its own.
    /// `logDirectoryGiven`: `--log-dir` named the log folder, so logs are where the user said.
    static func refusal(for job: Job, logDirectoryGiven: Bool) -> String? {
        guard !job.home.isWorkingFolder else { return nil }
        // Logs of a job of the same name in another file are that job's (this folder is its
        // home): moving them would move its history (trial NN).
        if let other = jobPath(of: "logs/\(job.name)"),
            other != job.file.standardizedFileURL.path
        {
            return nil
        }
        var moves: [(from: String, to: String)] = []
        if !logDirectoryGiven {
            let old = "logs/\(job.name)"
            let new = job.home.resolve(old)
            if holdsLogs(old), !holdsLogs(new) { moves.append((old, new)) }
        }
        if let written = job.writtenOutputDir, !written.hasPrefix("/"),
            holdsFiles(written), !holdsFiles(job.outputDir)
        {
            moves.append((written, job.outputDir))
        }
        guard !moves.isEmpty else { return nil }
        let commands = moves.map { move in
            let parent = (move.to as NSString).deletingLastPathComponent
            return
                "mkdir -p \(ShellWord.quoted(parent)) && mv \(ShellWord.quoted(move.from)) \(ShellWord.quoted(parent + "/"))"
        }
        let here = FileManager.default.currentDirectoryPath
        return
            "this job's \(moves.map(\.from).joined(separator: " and ")) are in the working folder, where courier kept them before a job's outputs and logs lived in its home (\(job.home.folder)); nothing was sent. Either move them there: \(commands.joined(separator: "; ")); or make this folder the job's home, with \"home\": \"\(here)\" in the job file"
    }

    /// The job file the newest log in `folder` names (`run.start`'s `jobPath`); `nil` when
    /// there is none, or it is from before courier logged it.
    private static func jobPath(of folder: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        guard let newest = names.filter({ $0.hasSuffix(".jsonl") }).max() else { return nil }
        return LogFiles.firstLine(of: (folder as NSString).appendingPathComponent(newest))?
            .runFields?.jobPath
    }

    /// Whether `folder` holds a log (`*.jsonl`).
    private static func holdsLogs(_ folder: String) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.contains { $0.hasSuffix(".jsonl") }
    }

    /// Whether `folder` exists and holds anything (a saved file, or `.courier/` state).
    private static func holdsFiles(_ folder: String) -> Bool {
        !((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).isEmpty
    }
}
