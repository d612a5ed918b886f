import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The tasks a replay with `--job` runs: found again in the job's own expansion by their ids,
/// so that each is rebuilt exactly as a run builds it (fan-out children from their parent's
/// fresh captures, pages from page 1, auth and captured tokens, saves, expectations and the
/// conditional state) instead of from what the log kept.
///
/// Tasks that capture values run too when they are not selected: the selected tasks may need
/// what they capture (a login's token, a listing's ids), as with `--resume`.
final class ReplaySelection: Sendable {
    /// Where a selected task's failed line came from, and when it was sent.
    struct Entry: Sendable {
        /// The logged line it replays; `nil` for `run --task`, which replays nothing.
        var origin: ReplayOrigin?
        /// The id or glob that selected it, for ``unmatched``.
        var name: String
        /// Seconds after the first selected line (`--pace logged`).
        var offset: TimeInterval
    }

    /// Selected tasks by ``FNV1a/taskKey(job:task:)``.
    let entries: [UInt64: Entry]
    /// Skipped lines whose id is still a template (`user-{id}`: the ids never came), as globs
    /// (`user-*`): every task of the job whose id matches is selected.
    let patterns: [(glob: String, entry: Entry)]
    /// `--header` values, which replace the job's.
    let overrides: [(name: String, value: String)]
    /// `--speed` for `--pace logged`; `nil` sends as soon as a slot is free.
    let pace: Double?
    let job: String
    /// Keys of the tasks the history says are done: a pattern (a skip's template) does not
    /// select them. Trial Z: a listing that failed midway had its children sent again, the
    /// ones the night had done too. Empty with `--all`, which sends done tasks as asked.
    let settled: Set<UInt64>
    private let matched = Locked<(keys: Set<UInt64>, patterns: Set<Int>)>(([], []))

    init(
        job: String, lines: [LogLine], overrides: [(name: String, value: String)], pace: Double?,
        settled: Set<UInt64> = []
    ) {
        self.job = job
        self.settled = settled
        let first = lines.map(\.time).min() ?? 0
        var entries: [UInt64: Entry] = [:]
        var patterns: [(String, Entry)] = []
        for line in lines {
            guard let task = line.task else { continue }
            let entry = Entry(
                origin: ReplayOrigin(run: line.run, task: task), name: task,
                offset: line.time - first)
            if line.event == LogEvent.skipped, task.contains("{") {
                patterns.append((Self.glob(task), entry))
            } else {
                entries[FNV1a.taskKey(job: job, task: task)] = entry
            }
        }
        self.entries = entries
        self.patterns = patterns
        self.overrides = overrides
        self.pace = pace
    }

    /// `courier run JOB --task GLOB…`: every task whose id matches one of `globs`, rebuilt
    /// from the job as a run builds it, with what it needs (the tasks that capture its
    /// inputs) run too; nothing is replayed.
    init(job: String, globs: [String]) {
        self.job = job
        entries = [:]
        patterns = globs.map { ($0, Entry(origin: nil, name: $0, offset: 0)) }
        overrides = []
        pace = nil
        settled = []
    }

    /// The specs of `job` whose captures the selected tasks may need, directly or through
    /// another capture: the tasks that capture which a replay or `--task` run sends though it
    /// did not choose them. A spec may be selected when one of the selection's ids or globs
    /// could name one of its tasks (its id as a glob, `user-{id}` as `user-*`).
    func neededProducers(in job: Job, on shard: Shard? = nil) -> Set<Int> {
        Self.neededProducers(in: job, specs: selectedSpecs(in: job, on: shard))
    }

    /// The specs of `job` one of whose tasks the selection may choose (on `shard`: see
    /// ``selectedSpecs(in:ids:globs:on:)``).
    func selectedSpecs(in job: Job, on shard: Shard? = nil) -> Set<Int> {
        Self.selectedSpecs(
            in: job, ids: entries.values.map(\.name), globs: patterns.map(\.glob), on: shard)
    }

    /// ``neededProducers(in:)`` of the tasks `ids` and `globs` select.
    static func neededProducers(
        in job: Job, ids: [String], globs: [String], on shard: Shard? = nil
    ) -> Set<Int> {
        neededProducers(in: job, specs: selectedSpecs(in: job, ids: ids, globs: globs, on: shard))
    }

    /// Whether `shard` runs the task `id`, known by its id alone (a log's, or one the command
    /// line names): its own, or one a spec that captures could have made (every shard runs
    /// those).
    static func runs(_ id: String, on shard: Shard, in job: Job) -> Bool {
        shard.owns(taskID: id)
            || job.tasks.contains { $0.hasCaptures && fnmatch(glob($0.id), id, 0) == 0 }
    }

    /// The specs of `job` one of whose tasks `ids` or `globs` may choose: one of the ids
    /// matches the spec's id as a glob, or a glob may choose it (``mayChoose(_:globs:)``).
    /// On `shard`, a task named by its id that another shard owns is not this run's: that
    /// shard sends it, with what it needs (an Indexed Job gives every pod the same `--task`;
    /// the others logged in for nothing).
    static func selectedSpecs(
        in job: Job, ids: [String], globs: [String], on shard: Shard? = nil
    ) -> Set<Int> {
        var (ids, globs) = (ids, globs)
        if let shard {
            ids = ids.filter { runs($0, on: shard, in: job) }
            globs = globs.filter {
                isPattern($0) || runs($0, on: shard, in: job)
            }
        }
        return Set(
            job.tasks.indices.filter { index in
                let spec = job.tasks[index]
                let shape = glob(spec.id)
                return ids.contains { fnmatch(shape, $0, 0) == 0 } || mayChoose(spec, globs: globs)
            })
    }

    /// The specs whose captures the tasks of `specs` may need, directly or through another
    /// capture. A producer for which `standsIn` is true is needed, but what it takes is not:
    /// it is not sent (a resume's listing whose ids were kept, ``ResumeNeeds``).
    static func neededProducers(
        in job: Job, specs: Set<Int>, standsIn: (TaskSpec) -> Bool = { _ in false }
    ) -> Set<Int> {
        var wanted = Set<String>()
        for index in specs { wanted.formUnion(takes(job.tasks[index])) }
        var needed = Set<Int>()
        var names = wanted
        while let name = names.popFirst() {
            for (index, spec) in job.tasks.enumerated()
            where !needed.contains(index) && spec.captures.contains(where: { $0.name == name }) {
                needed.insert(index)
                if standsIn(spec) { continue }
                names.formUnion(takes(spec).subtracting(wanted))
                wanted.formUnion(takes(spec))
            }
        }
        return needed
    }

    /// Whether one of `globs` could choose a task of `spec`: it matches the spec's id as a
    /// glob (`user-{id}` as `user-*`), or the other way round.
    static func mayChoose(_ spec: TaskSpec, globs: [String]) -> Bool {
        let shape = glob(spec.id)
        return globs.contains { fnmatch(shape, $0, 0) == 0 || fnmatch($0, spec.id, 0) == 0 }
    }

    /// The captures a spec's tasks take: its `{name}` inputs and the one it fans out over.
    private static func takes(_ spec: TaskSpec) -> Set<String> {
        spec.inputs.union(spec.captureSource.map { [$0.capture] } ?? [])
    }

    /// The globs of `run --task` that no task of `job` can match, found before the run so
    /// that a mistyped id sends nothing and logs no run. When the ids are not all known
    /// before running (a task that fans out over a capture, or whose id takes a captured
    /// value, has its ids only as the run goes), the globs no task's id could match
    /// (``mayChoose(_:globs:)``: `nope` where the ids are `list` and `item-{id}`); one that
    /// could is known to match nothing only at the run's end, which then exits 2.
    static func unmatchable(_ globs: [String], in job: Job) -> [String] {
        let knowable = job.tasks.allSatisfy { spec in
            spec.captureSource == nil
                && Set(Template(spec.id).variables).isSubset(of: spec.foreach.map(\.name))
        }
        guard knowable else {
            return globs.filter { glob in !job.tasks.contains { mayChoose($0, globs: [glob]) } }
        }
        var left = globs
        for case (_, _, .success(let id)) in JobValidator.checks(job) {
            left.removeAll { fnmatch($0, id, 0) == 0 }
            if left.isEmpty { break }
        }
        return left
    }

    /// How many tasks are known to be selected before running (template ids count once).
    var count: Int { entries.count }

    /// Whether globs select tasks too (`run --task`, a skip whose ids never came): their
    /// number is known only as the run finds them.
    var hasPatterns: Bool { !patterns.isEmpty }

    /// Whether no task matched any id or glob so far.
    var matchedNothing: Bool {
        matched.withLock { $0.keys.isEmpty && $0.patterns.isEmpty }
    }

    /// The selected task, ready to send (its origin, pacing and `--header` values set), or
    /// `nil` when the replay does not select it.
    func admit(_ task: ExpandedTask) -> ExpandedTask? {
        let key = FNV1a.taskKey(job: job, task: task.id)
        var entry = entries[key]
        var patternIndex: Int?
        if entry == nil {
            patternIndex = patterns.firstIndex { fnmatch($0.glob, task.id, 0) == 0 }
            guard let patternIndex else { return nil }
            entry = patterns[patternIndex].entry
            entry!.origin?.task = task.id
        }
        let isNew = matched.withLock { state in
            if let patternIndex { state.patterns.insert(patternIndex) }
            // Done: the pattern found it (the job still builds its tasks), and leaves it.
            if patternIndex != nil, settled.contains(key) { return false }
            return state.keys.insert(key).inserted
        }
        // The same id twice in one expansion is one task (docs/job-file.md).
        guard isNew, let entry else { return nil }
        var task = task
        task.replayOf = entry.origin
        if let pace { task.sendAt = entry.offset / pace }
        for (name, value) in overrides {
            task.request.headers[name] = value
            task.request.secretHeaderNames.insert(name.lowercased())
        }
        return task
    }

    /// Whether the replay selects the task `id` (by its id or a pattern), nothing marked.
    func selects(id: String) -> Bool {
        entries[FNV1a.taskKey(job: job, task: id)] != nil
            || patterns.contains { fnmatch($0.glob, id, 0) == 0 }
    }

    /// Whether the replay selects a task that could not be built or was skipped: it then
    /// gets its line (failed or skipped) in place of a request, and counts as found.
    func claims(id: String) -> Bool {
        let key = FNV1a.taskKey(job: job, task: id)
        let patternIndex =
            entries[key] == nil ? patterns.firstIndex { fnmatch($0.glob, id, 0) == 0 } : nil
        guard entries[key] != nil || patternIndex != nil else { return false }
        matched.withLock { state in
            state.keys.insert(key)
            if let patternIndex { state.patterns.insert(patternIndex) }
        }
        return true
    }

    /// Whether `id`, a task another shard sends, was selected by its id (counted before
    /// running): it is then settled as found, not one the job no longer builds.
    /// A pattern that matches it has matched a task of the job, on another shard (an Indexed
    /// Job gives every pod the same `--task`: the pods whose shard lacks the task have nothing
    /// to do, which is not a glob that matched nothing).
    func settlesElsewhere(id: String) -> Bool {
        let key = FNV1a.taskKey(job: job, task: id)
        guard entries[key] != nil else {
            if let index = patterns.firstIndex(where: { fnmatch($0.glob, id, 0) == 0 }) {
                matched.withLock { _ = $0.patterns.insert(index) }
            }
            return false
        }
        matched.withLock { _ = $0.keys.insert(key) }
        return true
    }

    /// Whether the task was selected by a pattern, not by its id (then it was not counted
    /// before the run).
    func isFromPattern(_ id: String) -> Bool {
        entries[FNV1a.taskKey(job: job, task: id)] == nil
    }

    /// How many of the tasks counted before running (``count``: selected by id, not by a
    /// pattern) the job no longer builds.
    var unmatchedCount: Int {
        let state = matched.withLock { $0 }
        return entries.keys.filter { !state.keys.contains($0) }.count
    }

    /// The selected tasks the job no longer builds: their ids, in the logs' order.
    var unmatched: [String] {
        let state = matched.withLock { $0 }
        var missing = entries.filter { !state.keys.contains($0.key) }.map(\.value)
        missing.sort { ($0.offset, $0.name) < ($1.offset, $1.name) }
        var ids = missing.map(\.name)
        for (index, pattern) in patterns.enumerated() where !state.patterns.contains(index) {
            ids.append(pattern.entry.name)
        }
        return ids
    }

    /// On `shard`, takes the ids named by a pattern with no glob character that another shard
    /// runs as settled there: this shard does not build them (a fan-out's child is found only
    /// when its listing runs, which it no longer does for them), and the run that owns one
    /// says whether it exists. A trial's Indexed Job exited 2 on every other pod.
    func settleElsewhere(on shard: Shard, in job: Job) {
        let elsewhere = patterns.indices.filter { index in
            let glob = patterns[index].glob
            return !Self.isPattern(glob) && !Self.runs(glob, on: shard, in: job)
        }
        guard !elsewhere.isEmpty else { return }
        matched.withLock { $0.patterns.formUnion(elsewhere) }
    }

    /// Whether `glob`, given on the command line, is a pattern, not one task's id.
    static func isPattern(_ glob: String) -> Bool {
        glob.contains { "*?[\\".contains($0) }
    }

    /// `user-{id}` as `user-*`, the glob characters of the id escaped.
    static func glob(_ template: String) -> String {
        var output = ""
        var inVariable = false
        for character in template {
            switch character {
            case "{" where !inVariable:
                inVariable = true
                output += "*"
            case "}" where inVariable:
                inVariable = false
            case _ where inVariable:
                continue
            case "*", "?", "[", "\\":
                output += "\\" + String(character)
            default:
                output.append(character)
            }
        }
        return output
    }
}
