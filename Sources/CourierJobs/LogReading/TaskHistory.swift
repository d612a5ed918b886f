import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What logs say about each task, folded line by line in the order the runs happened: a task's
/// outcome is its last final line across every log read (runs, resumed runs, replays rebuilt
/// from the job, every shard's). `run --resume`, `replay` and `report` all fold logs through
/// this one type, so they agree on what is done.
///
/// Two kinds of line do not decide an outcome:
/// - the lines of a replay without `--job` (`run.start` with `"replayFrom": "log"`): it re-sent
///   logged requests without the job's saves, expectations or conditional state, so an `ok`
///   there says nothing about the job's outputs;
/// - `retry` and `page` lines, unless they are a task's last word (a killed run): the task is
///   then not done.
///
/// And a run that completes earlier ones (a resume, a replay, `run --task`) never undoes a
/// task they did: a done task it sends again (a login, for its token; a task named with
/// `--task`; `replay --all`) and that fails, or is skipped, stays done. Its outputs from the
/// run that did it stand, and the night's history only gains. Only a plain run starts afresh.
///
/// Memory: a 64-bit key per finished-ok task (two for a write); whole lines only for tasks whose final outcome
/// is not `ok` (or for every task, when `keepAllFinals`), which are the ones a replay sends.
struct TaskHistory {
    /// How many log lines were read: none means the logs named hold no run at all.
    private(set) var lineCount = 0
    /// Keys (``FNV1a/taskKey(job:task:)``) of tasks whose latest line is `ok`.
    private(set) var done: Set<UInt64> = []
    /// The latest line of each task that is not done (or of every task with `keepAllFinals`).
    private(set) var finals: [UInt64: LogLine] = [:]
    /// Run ids in the order their `run.start` was read.
    private(set) var runs: [String] = []
    /// Runs whose `run.end` was read: a run in ``runs`` but not here was cut short (killed,
    /// or still running).
    private(set) var ended: Set<String> = []
    /// The data checks the last `run.end` read says its run failed.
    private(set) var lastEndChecks: [DataCheckVerdict.Failure] = []
    /// The records files the latest run that ended could not write (`recordsNotWritten`): a
    /// report does not call the job done while it says some.
    private(set) var lastEndRecordsNotWritten = 0
    /// Replays rebuilt from the log alone, whose lines decide nothing.
    private(set) var logOnlyReplays: Set<String> = []
    /// Runs that complete earlier ones (``JobHistory/RunStart/completesEarlier``): their
    /// failures leave done tasks done.
    private(set) var completingRuns: Set<String> = []
    /// Resumes of the whole job (no shard, no `--task`): one that ends uninterrupted walked
    /// every task the job builds and sent each one not done.
    private var walkingRuns: Set<String> = []
    /// The backfill range (`window`) of each run of one, and of its resumes and replays: a
    /// resume settles the failures of its own line of runs only.
    private var windowOfRun: [String: String] = [:]
    /// The shard of each sharded run: another shard's children do not settle a fan-out's skip.
    private var shardOfRun: [String: Shard] = [:]
    /// The run each log file read holds (by file name), and the runs each walking resume read
    /// (its `resumedFrom`, of those): a resume settles their failures only.
    private var runOfFile: [String: String] = [:]
    private var walkedFrom: [String: Set<String>] = [:]
    /// The globs each `run --task` chose (`only`): a task it chose that fails is not done,
    /// however an earlier run did it.
    private var chosen: [String: [String]] = [:]
    /// Skips whose id is still a template (`c{id}`: the parent failed before its values
    /// came), as globs, with their keys in `finals`. A later run's line for any task the
    /// template covers means the children were reached, and the skip no longer stands.
    private var templates: [(glob: String, key: UInt64, run: String)] = []
    let keepAllFinals: Bool
    /// Ids (globs) of the tasks whose run is kept with their `ok`: tasks that capture, whose
    /// kept values (``KeptCaptures``) are good only if that run wrote them.
    let keepRunsOf: [String]
    /// The run of the latest `ok` of each done task that `keepRunsOf` names.
    private(set) var okRuns: [UInt64: String] = [:]
    /// What the history says of each task's write (``WriteHistory``), as folded so far.
    private var writeFacts = WriteHistory()
    /// Each write's task id and the key it carried (`nil`: none), from its latest
    /// `request.start`: a write cut under way has no other line.
    private(set) var writeStarts: [UInt64: (task: String, key: String?)] = [:]
    /// The `request.start` line of each write whose latest word it is: a killed run left it
    /// under way, and no line says what became of it. Held only until a line decides the
    /// task, so a long history of writes answered holds none.
    private(set) var underWay: [UInt64: LogLine] = [:]
    /// The job file the first run read names (`run.start`'s `jobPath`): where the job's own
    /// history is, for logs read from a pipe or a copy.
    private(set) var jobPath: String?
    /// The folder the first run read wrote its log in (`run.start`'s `logDir`): its history,
    /// wherever `--log-dir` put it.
    private(set) var logDir: String?
    /// Whether to keep ``saved``: a repair's, not `report`'s fold of millions of lines.
    let keepSaves: Bool
    /// The files the runs read saved (`savedTo`, as logged), each with the task that saved it
    /// first: a repair's other tasks may not replace them (``SavedPaths``; a resume's fan-out
    /// child had replaced the night's literal save of the same file, exit 0).
    private(set) var saved: [String: String] = [:]
    /// How many records the latest `ok` of each done task that keeps records kept
    /// (`recordsKept`): a resume counts them toward `minRecords` (trial NNN).
    private(set) var recordsKept: [UInt64: Int] = [:]
    /// The idempotency key each task's latest keyed write carried.
    private var lastKeys: [UInt64: String] = [:]
    /// The idempotency key of the write whose `ok` made each done task done, when it had one:
    /// another write of the task (another night's body) is not done by it.
    private var doneWrites: [UInt64: String] = [:]
    /// The request each done write's `ok` line sent (a hash of its `requestDigest`): a later
    /// failure of another request under its id is another write's, which undoes it.
    private var doneRequests: [UInt64: UInt64] = [:]

    /// What the history says of each task's write, with which of them are done.
    var writes: WriteHistory {
        var writes = writeFacts
        writes.done = done.filter { writes.facts[$0] != nil }
        for task in writes.done {
            let key = writes.key(task: task, write: doneWrites[task])
            if key != task { writes.done.insert(key) }
        }
        // The key each write not done last went out with (a failed line, or a cut one; a
        // later repair that held it sent none).
        writes.nightKeys = lastKeys.filter { !done.contains($0.key) }
        return writes
    }

    init(keepAllFinals: Bool = false, keepRunsOf: [String] = [], keepSaves: Bool = false) {
        self.keepAllFinals = keepAllFinals
        self.keepRunsOf = keepRunsOf
        self.keepSaves = keepSaves
    }

    /// The ids, as globs, of the job's tasks that capture values: what `keepRunsOf` takes.
    static func capturingTasks(of job: Job) -> [String] {
        job.tasks.filter(\.hasCaptures).map { ReplaySelection.glob($0.id) }
    }

    /// - Parameter file: the log the line is read from, when known (``read(_:keepAllFinals:keepRunsOf:keepSaves:warn:)``).
    mutating func add(_ line: LogLine, file: String? = nil) {
        lineCount += 1
        if line.event == LogEvent.runEnd {
            ended.insert(line.run)
            lastEndChecks = line.runFields?.checks ?? []
            lastEndRecordsNotWritten = line.runFields?.recordsNotWritten ?? 0
            if walkingRuns.contains(line.run), line.runFields?.interrupted != true {
                settle(by: line.run, of: line.job)
            }
            return
        }
        if line.event == LogEvent.runStart {
            noteStart(line, file: file)
            return
        }
        // Every write counts, a log-only replay's too: what it sent, it sent.
        if line.event == LogEvent.request || line.event == LogEvent.requestStart,
            let task = line.task
        {
            let key = FNV1a.taskKey(job: line.job, task: task)
            writeFacts.add(line, key: key)
            if let sent = line.idempotencyKey { lastKeys[key] = sent }
            if line.event == LogEvent.requestStart {
                writeStarts[key] = (task, line.idempotencyKey)
                if !logOnlyReplays.contains(line.run) { underWay[key] = line }
            }
        }
        // Each page's line says its file, the last page's `ok` too.
        if keepSaves, let file = line.savedTo, let task = line.task, saved[file] == nil {
            saved[file] = task
        }
        guard LogEvent.decidesOutcome(line.event), let task = line.task,
            !logOnlyReplays.contains(line.run)
        else { return }
        let key = FNV1a.taskKey(job: line.job, task: task)
        // Read for every line of a report: a hash only when a write is left under way.
        if !underWay.isEmpty { underWay[key] = nil }
        if line.event == LogEvent.skipped, task.contains("{"), completingRuns.contains(line.run),
            !templates.contains(where: { $0.key == key }), plainRunsEnded
        {
            // A fan-out whose input failed in a run that completes a plain one: the plain run
            // ended without this skip, so it reached the fan-out's children, whose own lines
            // say what is done. The skip adds no task (it had added one not done).
            return
        }
        if !templates.isEmpty { settleTemplates(by: task, of: line) }
        if line.event == LogEvent.skipped, task.contains("{") {
            templates.removeAll { $0.key == key }
            templates.append((ReplaySelection.glob(task), key, line.run))
        }
        if line.outcome == LogOutcome.ok.rawValue {
            done.insert(key)
            doneWrites[key] = line.idempotencyKey
            if let digest = line.requestDigest { doneRequests[key] = FNV1a.hash(digest.utf8) }
            // A lookup only once some line said it: `report` folds millions of `ok` lines.
            if line.recordsKept != nil || (!recordsKept.isEmpty && recordsKept[key] != nil) {
                recordsKept[key] = line.recordsKept
            }
            if keepAllFinals { finals[key] = line } else { finals[key] = nil }
            if !keepRunsOf.isEmpty, keepRunsOf.contains(where: { fnmatch($0, task, 0) == 0 }) {
                okRuns[key] = line.run
            }
        } else if done.contains(key), completingRuns.contains(line.run),
            !undoes(line, key: key),
            !(chosen[line.run] ?? []).contains(where: { fnmatch($0, task, 0) == 0 })
        {
            // Sent again by a run that completes the one that did it, for what it captures
            // (a login): it stays done. One a `run --task` chose was asked for again, and its
            // failure is what the history says of it (a trial's refetch failed, and the
            // history still said every task done: no repair would send it).
            return
        } else {
            // `failed`, `skipped`, or `retry`/`page` as the last word of a killed run: not done.
            done.remove(key)
            doneWrites[key] = nil
            doneRequests[key] = nil
            finals[key] = line
            okRuns[key] = nil
        }
    }

    /// Whether a failed line of a run that completes the one that did its task takes the
    /// task's `ok` back: its records could not be kept, the run held its write, or the write
    /// it sent is another request than the one its `ok` made (its id now sends another
    /// task's request: trial WWW's held write beside "every task done"; trial XXX's refused
    /// one, counted done by its id's answer to the other request, and never sent again). Any
    /// other (a login sent again for what it captures) leaves it done.
    private func undoes(_ line: LogLine, key: UInt64) -> Bool {
        if line.errorKind == LogErrorKind.records || line.errorKind == LogErrorKind.writeHeld {
            return true
        }
        guard let digest = line.requestDigest else { return false }
        return doneRequests[key] != FNV1a.hash(digest.utf8)
    }

    /// What a run's `run.start` says of it: its kind, its windows and shard, and for a resume
    /// that walks the job, the runs it read.
    private mutating func noteStart(_ line: LogLine, file: String?) {
        if !runs.contains(line.run) { runs.append(line.run) }
        if jobPath == nil { jobPath = line.runFields?.jobPath }
        if logDir == nil { logDir = line.runFields?.logDir }
        if !line.replayOf.isEmpty, line.replayFrom == "log" { logOnlyReplays.insert(line.run) }
        if JobHistory.completesEarlier(line) { completingRuns.insert(line.run) }
        if !line.only.isEmpty { chosen[line.run] = line.only }
        if let window = line.runFields?.window { windowOfRun[line.run] = window }
        if let fields = line.runFields, let index = fields.shardIndex,
            let count = fields.shardCount
        {
            shardOfRun[line.run] = Shard(index: index, count: count)
        }
        let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
        if let file { runOfFile[name(file)] = line.run }
        if !line.resumedFrom.isEmpty, line.replayFrom == nil, line.only.isEmpty,
            line.runFields?.shardCount == nil
        {
            walkingRuns.insert(line.run)
            if file != nil {
                walkedFrom[line.run] = Set(line.resumedFrom.compactMap { runOfFile[name($0)] })
            }
        }
    }

    /// Whether the history has a plain run, and every plain run in it ended (`run.end`).
    private var plainRunsEnded: Bool {
        let plain = runs.filter { !completingRuns.contains($0) }
        return !plain.isEmpty && plain.allSatisfy(ended.contains)
    }

    /// Drops the template skips of earlier runs that `task` (logged by a later run) matches.
    /// Not another shard's line: that shard's children are not the skipped run's (trial YY: a
    /// shard whose listing failed lost its children from every count once the other shard
    /// logged its own).
    private mutating func settleTemplates(by task: String, of line: LogLine) {
        let shard = shardOfRun[line.run]
        templates.removeAll { template in
            guard template.run != line.run, fnmatch(template.glob, task, 0) == 0 else {
                return false
            }
            if let shard, let skipped = shardOfRun[template.run], skipped.count == shard.count,
                skipped.index != shard.index
            {
                return false
            }
            finals[template.key] = nil
            return true
        }
    }

    /// A whole resume that ran to its end sent every task not done that the job builds: an
    /// earlier run's failure it did not send again is of a task the job no longer builds
    /// (removed, renamed), and is settled: `--resume`, `replay --job` and `report` no longer
    /// count it (a trial's history said "1 task not done" for ever, and `replay --job`
    /// refused that task and exited 1 every time).
    /// Only `job`'s (every job's when `nil`): logs of several jobs may be read together. Also
    /// for the run now ending, whose `run.end` is not written yet
    /// (``JobHistory/notDone(folder:current:owns:walkedBy:)``).
    /// A resume walks its own line's tasks only: the night's, or one backfill's range. The
    /// other lines' failures stand (trial UU: a night's resume settled a failed backfill's
    /// windows, and `report` called the job complete with 18 of them missing).
    /// And only the failures of the runs it read (its `resumedFrom`), when the logs were read
    /// with their files: a resume of an older night's log, which started after the newest
    /// night, settled that night's failures (trial ZZ: `report` said complete).
    mutating func settle(by run: String, of job: String? = nil) {
        let window = windowOfRun[run]
        let from = walkedFrom[run]
        finals = finals.filter {
            (job != nil && $0.value.job != job) || $0.value.run == run
                || $0.value.outcome == LogOutcome.ok.rawValue || windowOfRun[$0.value.run] != window
                || from.map { [run = $0.value.run] in !$0.contains(run) } == true
        }
    }

    /// Reads `paths` in run order (``LogFiles/ordered(_:)``).
    static func read(
        _ paths: [String], keepAllFinals: Bool = false, keepRunsOf: [String] = [],
        keepSaves: Bool = false, warn: @escaping (String) -> Void
    ) -> TaskHistory {
        var history = TaskHistory(
            keepAllFinals: keepAllFinals, keepRunsOf: keepRunsOf, keepSaves: keepSaves)
        for entry in LogReader(paths: LogFiles.ordered(paths), warn: warn) {
            history.add(entry.line, file: entry.file)
        }
        return history
    }
}
