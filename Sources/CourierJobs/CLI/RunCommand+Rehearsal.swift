import Courier
import Foundation

/// `--record DIR` and `--offline DIR`: a run that keeps every answer it gets, and a run that
/// rehearses the job against those answers without a network (docs/cli.md, "Rehearse a job
/// offline").
extension RunCommand {
    /// The state a rehearsal starts from, copied from the job's outputs when it is recorded:
    /// the `since` cursors and the conditional validators, so that the rehearsal sends the
    /// requests the recorded run sent, and the records files (those whose path takes no
    /// variable), so that it merges into what the recorded run merged into. Paths under
    /// `outputDir`.
    static func rehearsedState(of job: Job) -> [String] {
        [".courier/since", ".courier/state"]
            + job.tasks.compactMap(\.records?.to).filter { Template($0).variables.isEmpty }
    }

    /// Sets the run up to record or to rehearse; the refusal's exit code when it cannot.
    static func prepareRehearsal(
        _ job: inout Job, arguments: RunArguments, options: inout RunOptions, console: Console
    ) -> Int32? {
        guard arguments.record != nil || arguments.offline != nil else { return nil }
        if arguments.resume || arguments.oncePer != nil || !arguments.only.isEmpty
            || arguments.dryRun
            || options.logToStandardOutput
            || (arguments.logDirectoryGiven && arguments.offline != nil)
            || (arguments.record != nil && arguments.offline != nil)
        {
            console.error(
                "courier: --record and --offline go with a plain run: not with each other, --resume, --once-per, --task, --dry-run or --log-dir - (and a rehearsal's log goes beside its recording, not to --log-dir)"
            )
            return CommandLineInterface.ExitCode.usage
        }
        let state = rehearsedState(of: job)
        do throws(RecordingError) {
            if let folder = arguments.record {
                let recorder = try Recorder(folder: folder)
                let from = URL(fileURLWithPath: job.outputDir)
                let to = folder.appendingPathComponent("state")
                copy(state, from: from, to: to)
                copy(confirmedSaves(of: job, in: from), from: from, to: to, keepingTimes: true)
                options.recorder = recorder
            }
            if let folder = arguments.offline {
                options.offline = try OfflineHTTPClient(
                    folder: folder, redactor: Redactor(secrets: job.secrets))
                // A rehearsal writes beside its recording, never into the job's outputs, logs
                // or state: each into a folder of its own.
                let rehearsal = folder.appendingPathComponent(
                    "rehearsals/\(Timestamp.compact(Date()))")
                job.outputDir = rehearsal.appendingPathComponent("out").path
                options.logDirectory = rehearsal.appendingPathComponent("logs")
                silence(&job, options: &options, console: console)
                let from = folder.appendingPathComponent("state")
                let to = URL(fileURLWithPath: job.outputDir)
                copy(state, from: from, to: to)
                copy(confirmedSaves(of: job, in: from), from: from, to: to, keepingTimes: true)
            }
        } catch {
            console.error("courier: \(job.name): \(error)")
            return CommandLineInterface.ExitCode.usage
        }
        return nil
    }

    /// A rehearsal tells no one outside: no ping (it would tell the job's check a night ran),
    /// no metrics file or push, no shared host budget (nothing reaches the hosts), no trace
    /// export (``exportTrace(_:job:options:console:)`` skips a rehearsal).
    private static func silence(_ job: inout Job, options: inout RunOptions, console: Console) {
        var dropped: [String] = []
        if job.notify != nil { dropped.append("no pings") }
        if options.metrics != nil || options.metricsPush != nil { dropped.append("no metrics") }
        job.notify = nil
        job.sharedHosts = false
        options.metrics = nil
        options.metricsPush = nil
        if !dropped.isEmpty {
            console.error(
                "courier: \(job.name): a rehearsal sends \(dropped.joined(separator: " and ")): nothing of it reaches the world outside its folder"
            )
        }
    }

    /// The saved copies under `folder` whose validators its state keeps, of the tasks that
    /// take their records from the copy a 304 confirms (`conditional` with `records`): a
    /// rehearsal of a night of 304s reads them (trial UUU: every such task failed, its copy
    /// not there). Other saves a 304 confirms are not kept: the rehearsal leaves no file for
    /// them, as docs/cli.md says.
    static func confirmedSaves(of job: Job, in folder: URL) -> [String] {
        let globs = job.tasks.filter { $0.conditional && $0.records != nil }.compactMap {
            $0.save.map(ReplaySelection.glob)
        }
        guard !globs.isEmpty else { return [] }
        return ConditionalState.savedPaths(outputDir: folder.path).filter { path in
            !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
                && globs.contains { fnmatch($0, path, 0) == 0 }
        }
    }

    /// Copies the files of `paths` that exist under `from` to the same paths under `to`;
    /// `keepingTimes`: with their modification times, which the state's validators are kept
    /// with (``FileStamp``), so that the copy is sent for as the original was.
    private static func copy(_ paths: [String], from: URL, to: URL, keepingTimes: Bool = false) {
        for path in paths {
            let source = from.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: source.path) else { continue }
            let target = to.appendingPathComponent(path)
            guard (try? OutputFile.write(data, to: target)) != nil, keepingTimes else { continue }
            var status = stat()
            guard stat(source.path, &status) == 0 else { continue }
            #if canImport(Darwin)
                let times = [status.st_atimespec, status.st_mtimespec]
            #else
                let times = [status.st_atim, status.st_mtim]
            #endif
            _ = utimensat(AT_FDCWD, target.path, times, 0)
        }
    }
}
