import Foundation

/// Which of a job's logs make up its current history: the latest plain run (or the latest
/// plain run of every shard, when the job last ran in shards) and every resume and replay
/// since, in the order they started.
///
/// A plain run starts the job afresh (tonight's cron run fetches everything again), so the
/// runs before it no longer say what is done; the resumes and replays after it complete it.
/// `run --resume` skips what this history says is done, whatever kind of run did it.
struct JobHistory: Equatable {
    /// The logs, oldest first.
    var logs: [String]
    /// Whether a whole run of the job is among them: a plain run, or a plain run of every
    /// shard of the newest split. Without one, tasks no run reached have no line at all, and
    /// the logs cannot tell that they are not done.
    var whole = true

    /// What the first line of a log says about the run.
    struct RunStart: Equatable {
        var path: String
        var time: Double
        /// A replay, a resume or a run of chosen tasks (`run --task`, which logs `replayFrom`
        /// `job`): it completes a plain run rather than starting afresh.
        var completesEarlier: Bool
        var shard: Shard?
        /// A resume of the whole job (or of its shard): it walks every task, unlike a replay
        /// or a `run --task`, which choose some.
        var walksAll = false
        /// Its log ends with `run.end` (or it is the run now ending): a killed run's does not,
        /// and the tasks it never reached have no line.
        var ended = true
        /// A backfill's range (`run --window`), for it and a resume or replay of it: its
        /// `run.start` logs it.
        var window: String? = nil
        /// The globs a `run --task` chose (`only`), when it is no resume or replay: the
        /// shards of such a run are a split of their own (``split(of:among:)``).
        var chosen: [String] = []
        /// `run --once-per KEY`'s key: the shards of one Kubernetes Job share it.
        var oncePer: String? = nil
        var backfill: Bool { window != nil }
    }

    /// How many of the job's tasks the logs in `folder` leave not done (their final line is
    /// not `ok`), every shard's and run's, this one's included once its lines are on file; and
    /// how many of those are writes a repair held (`task.skipped`, `writeHeld`): only a name
    /// sends them.
    /// `current`: the log of the run now ending, whose `run.end` is not written yet (`nil`
    /// when it was stopped early: it is no more whole than a killed run).
    /// `mine`: of those not held, how many `owns` says are this run's (a shard's own, and
    /// those every shard runs), all of them without it.
    /// `walkedBy`: the run now ending, when it walked every task the job builds and sent each
    /// one not done: a failure of an earlier run it did not send again is then of a task the
    /// job no longer builds (removed, renamed), and is not counted (a trial's history said
    /// "1 task not done" for ever after the task left the job).
    static func notDone(
        folder: URL, current: String? = nil, owns: ((String) -> Bool)? = nil,
        walkedBy: String? = nil
    ) -> (count: Int, held: Int, whole: Bool, mine: Int) {
        let history = read(folder: folder, current: current)
        var read = TaskHistory.read(history.logs, warn: { _ in })
        if let walkedBy { read.settle(by: walkedBy) }
        let finals = read.finals
        let held = finals.values.filter { $0.errorKind == LogErrorKind.writeHeld }.count
        let mine = owns.map { owns in
            finals.values.filter {
                $0.errorKind != LogErrorKind.writeHeld && ($0.task.map(owns) ?? true)
            }.count
        }
        return (finals.count, held, history.whole, mine ?? finals.count - held)
    }

    /// The history among the `.jsonl` files directly in `folder` (a job's log folder).
    static func read(folder: URL, current: String? = nil) -> JobHistory {
        select(starts(in: folder, current: current))
    }

    /// The first lines of the logs directly in `folder`.
    static func starts(in folder: URL, current: String? = nil) -> [RunStart] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.compactMap { name -> RunStart? in
            let path = folder.appendingPathComponent(name).standardizedFileURL.path
            guard let first = LogFiles.firstLine(of: path), first.event == LogEvent.runStart
            else { return nil }
            return runStart(path: path, first: first, current: current)
        }
    }

    /// The logs of the runs started with `--once-per key`, every shard's: the night a pod of
    /// that Job completes, whatever later nights ran since (trial HHH: a late pod resumed the
    /// next night's history, and made its own night's writes again).
    static func logs(oncePer key: String, folder: URL) -> [URL] {
        starts(in: folder).filter { $0.oncePer == key }.map { URL(fileURLWithPath: $0.path) }
    }

    /// Whether a run started with `--once-per key` on `shard` (the whole job: `nil`) is among
    /// the job's logs in `folder`: then a run with that key resumes it (a pod Kubernetes
    /// retries), else it starts the job afresh (the next night's Job, another key).
    ///
    /// A shard whose pod never ran while the others did is that Job's too once a repair was
    /// made after them (`--resume`, of the whole job or of that shard): the repair may have
    /// done the shard's tasks, and its retried pod must complete the Job, not start the shard
    /// afresh (trial GGG: its writes were made twice). Before any repair, the shard runs fresh,
    /// as each pod of a Job does.
    static func hasRun(oncePer key: String, shard: Shard?, folder: URL) -> Bool {
        let starts = starts(in: folder)
        let keyed = starts.filter { $0.oncePer == key }
        if keyed.contains(where: { $0.shard == shard }) { return true }
        guard let shard,
            let first = keyed.filter({ $0.shard?.count == shard.count })
                .map(\.time).min()
        else { return false }
        return starts.contains { $0.completesEarlier && $0.time > first && $0.oncePer != key }
    }

    /// Of the log files `paths` (any jobs'), those in their job's current history, and those
    /// whose first line is not a `run.start` (nothing to judge them by): the logs whose task
    /// lines `report` folds, so that it says of each task what `--resume` would (a trial's
    /// report called a night complete from an earlier night's lines, after a failed repair).
    /// `whole`: for each job, whether its current history holds a whole run (``whole``), as
    /// `--resume` judges it: `report` says complete only then.
    static func currentLogs(among paths: [String]) -> (logs: Set<String>, whole: [String: Bool]) {
        var byJob: [String: [RunStart]] = [:]
        var unknown = Set<String>()
        for path in paths {
            guard let first = LogFiles.firstLine(of: path), first.event == LogEvent.runStart
            else {
                unknown.insert(path)
                continue
            }
            byJob[first.job, default: []].append(runStart(path: path, first: first))
        }
        let histories = byJob.mapValues(select)
        return (
            unknown.union(histories.values.flatMap(\.logs)), histories.mapValues(\.whole)
        )
    }

    /// What the `run.start` line `first`, of the log at `path`, says of its run.
    private static func runStart(path: String, first: LogLine, current: String? = nil)
        -> RunStart
    {
        RunStart(
            path: path, time: first.time,
            completesEarlier: completesEarlier(first),
            // As `run.start` says, else as the log's name does (`…-shard-2-of-4.jsonl`).
            shard: first.runFields.flatMap { fields in
                fields.shardIndex.flatMap { index in
                    fields.shardCount.flatMap { Shard(index: index, count: $0) }
                }
            } ?? shard(fromName: URL(fileURLWithPath: path).lastPathComponent),
            walksAll: !first.resumedFrom.isEmpty && first.replayFrom == nil
                && first.replayOf.isEmpty,
            ended: path == current || LogFiles.endsWithRunEnd(path),
            window: first.runFields?.window,
            chosen: first.resumedFrom.isEmpty && first.replayOf.isEmpty ? first.only : [],
            oncePer: first.runFields?.oncePer)
    }

    /// Whether the run whose `run.start` is `first` completes earlier runs: a replay, a resume
    /// or a run of chosen tasks (`run --task` logs `replayFrom` `job`).
    static func completesEarlier(_ first: LogLine) -> Bool {
        !first.replayOf.isEmpty || !first.resumedFrom.isEmpty || first.replayFrom != nil
    }

    /// The rule, as a pure function of the runs' first lines.
    static func select(_ starts: [RunStart]) -> JobHistory {
        var ordered = starts.sorted { ($0.time, $0.path) < ($1.time, $1.path) }
        let plain = ordered.filter { !$0.completesEarlier }
        // A resume or replay of a backfill completes the backfill, not the night after it,
        // and one of a night completes the night, not a backfill after it: each is of the
        // other line (``otherLines(folder:current:)``; trial QQ: a replay of a backfill's log
        // put its tasks among the night's, and `--resume` alone was named their repair).
        if let newest = plain.last {
            ordered.removeAll { $0.completesEarlier && $0.backfill != newest.backfill }
        }
        // A resume of the whole job that ended walked every task: whole from then on, what
        // came before it.
        func wholeResume(since start: Double) -> Bool {
            ordered.contains { $0.walksAll && $0.ended && $0.shard == nil && $0.time >= start }
        }
        guard let newest = plain.last else {
            return JobHistory(
                logs: ordered.map(\.path), whole: wholeResume(since: -.infinity))
        }
        var chosen: [RunStart]
        if let count = newest.shard?.count {
            // The newest split (``split(of:among:)``: each shard's run nearest the newest, of
            // its night), none older than the latest run that covered the whole job, was
            // split otherwise, or walked other windows (a sharded night before a sharded
            // backfill is not one of its shards). Trial VV: a night that ran on one shard took
            // the last night's other shard as its own, and `report` said complete.
            let cutoff =
                plain.last {
                    $0.shard == nil || $0.shard?.count != count || $0.window != newest.window
                }?.time
                ?? -Double.infinity
            chosen = split(of: newest, among: plain.filter { $0.time > cutoff })
        } else {
            chosen = [newest]
        }
        let start = chosen.map(\.time).min() ?? newest.time
        let chosenPaths = Set(chosen.map(\.path))
        return JobHistory(
            logs: ordered.filter {
                chosenPaths.contains($0.path) || ($0.completesEarlier && $0.time >= start)
            }.map(\.path),
            whole: chosen.count == (newest.shard?.count ?? 1)
                && chosen.allSatisfy { isCovered($0, by: ordered) } || wholeResume(since: start))
    }

    /// Whether `run` reached every task it owned: it ended, or a resume of its shard (or of
    /// the whole job) that ended went on after it. A trial's history said "every task done"
    /// after one shard's resume, while the other shard's killed run had reached none of its.
    static func isCovered(_ run: RunStart, by runs: [RunStart]) -> Bool {
        run.ended
            || runs.contains {
                $0.walksAll && $0.ended && $0.time > run.time
                    && ($0.shard == nil || $0.shard == run.shard)
            }
    }

    /// The shard a log's name carries (`…-shard-2-of-4.jsonl`), if any.
    static func shard(fromName name: String) -> Shard? {
        guard name.hasSuffix(".jsonl"), let range = name.range(of: "-shard-", options: .backwards)
        else { return nil }
        let tag = name[range.upperBound...].dropLast(".jsonl".count)
        let parts = tag.components(separatedBy: "-of-")
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            return nil
        }
        return Shard(index: index, count: count)
    }
}

extension JobHistory {
    /// Whether the run of `log` started before the job's history in `folder` (its latest plain
    /// run, and what completes it): a resume of it repairs an older night, which the history
    /// no longer counts (trial AAA: a failed repair of an older night's write said "the job's
    /// history: every task done", and named no repair).
    static func precedes(_ log: String, folder: URL) -> Bool {
        let starts = starts(in: folder)
        let name = URL(fileURLWithPath: log).lastPathComponent
        guard
            let run = starts.first(where: {
                URL(fileURLWithPath: $0.path).lastPathComponent == name
            }),
            let first = select(starts).logs.compactMap({ path in
                starts.first { $0.path == path }?.time
            }).min()
        else { return false }
        return run.time < first
    }

    /// What the job's history in `folder` and the `logs` a command was given say of its writes
    /// together: a write answered, or left under way, in either is not sent again because the
    /// logs given leave it out (trial R: `--resume` of a cut log; trial S: a replay of the
    /// night's log after a replay had sent the write). `nil` when the folder holds no history;
    /// logs read from standard input are not read again.
    ///
    /// The runs of the folder since the earliest log given are read too, those before the
    /// job's latest plain run included: a replay or a resume of that log made before the next
    /// night sent its writes (trial AAA: a replay had made the night's charge before the next
    /// night, and the repair after that night, reading from it, made it again).
    static func writes(folder: URL, with logs: [String]) -> WriteHistory? {
        writes(folders: [folder], with: logs)
    }

    /// ``writes(folder:with:)`` over several folders (each once), merged: a write any of
    /// them made was made. `nil` when none holds a history.
    static func writes(folders: [URL], with logs: [String]) -> WriteHistory? {
        var merged: WriteHistory?
        var seen = Set<String>()
        for folder in folders where seen.insert(folder.standardizedFileURL.path).inserted {
            guard let writes = writesOf(folder: folder, with: logs) else { continue }
            merged = merged.map { $0.merging(writes) } ?? writes
        }
        return merged
    }

    private static func writesOf(folder: URL, with logs: [String]) -> WriteHistory? {
        let starts = starts(in: folder)
        let history = select(starts).logs
        guard !history.isEmpty else { return nil }
        let given = LogFiles.expandingFolders(logs.filter { $0 != "-" }).map {
            URL(fileURLWithPath: $0).standardizedFileURL.path
        }
        let named = Set(given)
        // A log copied elsewhere (or renamed) is known by its run, which names its file here
        // (`TIME-RUN.jsonl`): the runs since it are read too (trial GGG).
        let runs = given.compactMap { LogFiles.firstLine(of: $0)?.run }.map { "-\($0).jsonl" }
        let since =
            starts.filter { start in
                named.contains(start.path) || runs.contains { start.path.hasSuffix($0) }
            }.map(\.time).min().map { earliest in
                starts.filter { $0.time >= earliest }.map(\.path)
            } ?? []
        return TaskHistory.read(Set(history + given + since).sorted(), warn: { _ in }).writes
    }
}
