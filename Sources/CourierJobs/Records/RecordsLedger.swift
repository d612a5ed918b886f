import Courier
import Foundation

/// What a run learns about its records files as its tasks are handed out and end: which files
/// there are, and which must stay as they are because a task that writes one did not end `ok`.
///
/// A records file changes only when every task writing it in the run ended `ok` (or was done
/// by the run's history, for `--resume` and `replay --job`). A task whose file is unknown (it
/// did not build, or was skipped before its id was known) holds back the file its spec names,
/// or every file when that depends on values; so does an interrupted run.
final class RecordsLedger: Sendable {
    struct Target: Sendable {
        var rule: RecordsRule
        /// Why the file stays as it is this run (a task failed): its parts wait for a resume.
        var held: String?
        /// Why a `replace` file stays as it is with no resume to wait for: a task's response
        /// was ignored (`onResponse`), and the file without that task's records would be
        /// another's, or empty (trial HH: an ignored 404 emptied the file, exit 0).
        var keptAsIs: String?
        /// A records error (tasks disagreeing on how the file is written): the run fails.
        var failure: String?
        /// `replace` only: the tasks the history did (resumed or not selected), whose parts
        /// the new file needs.
        var doneWriters: Set<UInt64> = []
    }

    private let state = Locked<(targets: [String: Target], heldAll: String?)>(([:], nil))
    private let job: Job

    init(job: Job) {
        self.job = job
    }

    /// Whether the job writes records at all.
    static func needed(for job: Job) -> Bool { job.tasks.contains { $0.records != nil } }

    /// A task of this run that writes `target` ended.
    func ended(_ target: RecordsTarget, task: String, ok: Bool) {
        update(target) { entry in
            if !ok, entry.held == nil { entry.held = "task \(task) failed" }
        }
    }

    /// A task that writes the `replace` file `target` ended ok with its response ignored: the
    /// file stays as it was.
    func ignored(_ target: RecordsTarget, task: String) {
        update(target) { entry in
            if entry.keptAsIs == nil {
                entry.keptAsIs =
                    "task \(task)'s response was ignored (onResponse), and a \"replace\" would write the file without its records"
            }
        }
    }

    /// A task that writes `target` was done by the run's history: its part should be there.
    func done(_ target: RecordsTarget, key: UInt64) {
        update(target) { entry in
            if entry.rule.write == .replace { entry.doneWriters.insert(key) }
        }
    }

    /// A task that writes `target` neither ran now nor was done before (a replay that did not
    /// select it): the file would miss its records.
    /// `stale`: it was done, but its kept records are older than the file.
    func notRun(_ target: RecordsTarget, task: String, stale: Bool = false) {
        update(target) { entry in
            if entry.held == nil {
                entry.held =
                    stale
                    ? "the records task \(task) kept are older than the file, which a later run wrote, and this replay does not send it"
                    : "task \(task) neither ran in this replay nor was done by the logs it replays"
            }
        }
    }

    /// A task of `spec` the history counts as done, which did not build now (what it takes
    /// was not captured again): as ``done(_:key:)`` when its file's path needs no values,
    /// else as ``unknown(spec:task:)``.
    func done(spec index: Int?, task: String, key: UInt64) {
        guard let index, job.tasks.indices.contains(index), let rule = job.tasks[index].records
        else { return }
        let template = Template(rule.to)
        guard template.variables.isEmpty else { return unknown(spec: index, task: task) }
        done(RecordsTarget(rule: rule, path: RecordsRule.canonical(template.render([:]))), key: key)
    }

    /// A task of `spec` whose file is unknown did not run: it did not build, or what it needed
    /// failed.
    func unknown(spec index: Int?, task: String) {
        guard let index, job.tasks.indices.contains(index), let rule = job.tasks[index].records
        else { return }
        let reason = "task \(task) did not run"
        if Template(rule.to).variables.isEmpty {
            let path = RecordsRule.canonical(Template(rule.to).render([:]))
            update(RecordsTarget(rule: rule, path: path)) { entry in
                if entry.held == nil { entry.held = reason }
            }
        } else {
            interrupted("\(reason), and its records file depends on values it never had")
        }
    }

    /// Holds back every file: the run stopped before every task ran, or a task's file could be
    /// any of them.
    func interrupted(_ reason: String) {
        state.withLock { state in
            if state.heldAll == nil { state.heldAll = reason }
        }
    }

    /// The files, and why all of them stay as they are, if they do.
    func snapshot() -> (targets: [(path: String, target: Target)], heldAll: String?) {
        state.withLock { state in
            (
                state.targets.map { (path: $0.key, target: $0.value) }.sorted {
                    $0.path < $1.path
                },
                state.heldAll
            )
        }
    }

    private func update(_ target: RecordsTarget, _ change: (inout Target) -> Void) {
        state.withLock { state in
            var entry = state.targets[target.path] ?? Target(rule: target.rule)
            if entry.rule.settings != target.rule.settings, entry.failure == nil {
                entry.failure =
                    "tasks write it with different settings (\(entry.rule.describedSettings), and \(target.rule.describedSettings)); tasks sharing a records file must agree on write, key and deleted"
            }
            change(&entry)
            state.targets[target.path] = entry
        }
    }
}
