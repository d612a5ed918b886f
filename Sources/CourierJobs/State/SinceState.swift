import Courier
import Foundation

/// The cursors of a job's `since` tasks, kept in `outputDir/.courier/since` between runs: task
/// id → the greatest value its last complete fetch saw.
///
/// A task's cursor moves only when the task ended `ok`, every page of it, and only at a write
/// of the file (at the end of the run, a signal's included): a task that failed part-way, or a
/// run killed before its end, leaves the cursor where it was, so the next run fetches that
/// window again rather than skipping what was never saved. The file is JSON, replaced
/// atomically (``OutputFile``) under `.courier/since.lock`, merged with what it holds then, so
/// shards each add their own tasks' cursors. A file that cannot be read is never written over.
final class SinceState: Sendable {
    let url: URL
    /// The cursors as this run found them: what its tasks are offered.
    let kept: [String: String]
    private let pending = Locked<[String: String]>([:])
    private let unreadable: String?
    private let tag: String?
    /// The run's shard, and the `since` tasks every shard runs, whose cursors it keeps as its
    /// own (``ShardedCursors``).
    private let shard: Shard?
    private let everyShard: Set<String>
    /// The `since` tasks' ids (not the windows'), and the values this whole-job run withheld
    /// for them (``RepairCursors``).
    private let sinceIDs: Set<String>
    private let withheld = Locked<[String: String]>([:])

    /// Where the cursors of the job whose outputs are in `outputDir` are kept.
    static func location(outputDir: String) -> URL {
        CursorFile.location(outputDir: outputDir)
    }

    /// The `since` tasks of `job` that every shard runs (they capture), and of them those
    /// whose values can be ordered (a `max` pointer's, not a header's token).
    static func everyShard(of job: Job) -> (ids: Set<String>, ordered: Set<String>) {
        let tasks = job.tasks.filter { $0.since != nil && $0.hasCaptures }
        let ordered = tasks.filter {
            if case .max? = $0.since?.source { true } else { false }
        }
        return (Set(tasks.map(\.id)), Set(ordered.map(\.id)))
    }

    /// The cursors a run of `job` (on `shard`) starts from, out of the file's entries.
    static func view(of file: [String: String], job: Job, shard: Shard?) -> [String: String] {
        let file = file.filter { !RepairCursors.isRepairKey($0.key) }
        let (ids, ordered) = everyShard(of: job)
        guard !ids.isEmpty else { return file }
        return ShardedCursors.resolved(file, everyShard: ids, ordered: ordered, shard: shard)
    }

    init(outputDir: String, tag: String?, job: Job? = nil, shard: Shard? = nil) {
        url = Self.location(outputDir: outputDir)
        self.tag = tag
        self.shard = shard
        everyShard = job.map { Self.everyShard(of: $0).ids } ?? []
        sinceIDs = Set(job?.tasks.filter { $0.since != nil }.map(\.id) ?? [])
        switch Self.load(url) {
        case .success(let cursors):
            kept = job.map { Self.view(of: cursors, job: $0, shard: shard) } ?? cursors
            unreadable = nil
        case .failure(let problem):
            kept = [:]
            unreadable = problem.reason
        }
    }

    /// Why the file cannot be used, for a warning at the run's start; `nil` when it can.
    var problem: String? {
        unreadable.map {
            "\(url.relativePath): \($0); every since task starts from its start value, and the file is left as it is"
        }
    }

    /// Cursors of tasks whose records are not in their file yet (``release(_:)``).
    private let held = Locked<[String: String]>([:])

    /// Keeps `value` as task `id`'s cursor at the next write.
    func record(_ value: String, for id: String) {
        pending.withLock { $0[id] = value }
        moved.withLock { $0[id] = value }
    }

    /// The cursors this run moved, kept after their write for ``cursors``.
    private let moved = Locked<[String: String]>([:])

    /// Every cursor of the job as the run leaves it: those it found, with those it moved.
    var cursors: [String: String] {
        kept.merging(moved.withLock { $0 }) { _, new in new }
    }

    /// Holds `value` for task `id`, whose `records` are put in their file only at the run's
    /// end: the cursor may not move past records that never reached the file.
    func hold(_ value: String, for id: String) {
        held.withLock { $0[id] = value }
    }

    /// Moves the held cursors of `ids`, whose records are now in their file, to the next write.
    func release(_ ids: [String]) {
        let values = held.withLock { held in ids.compactMap { id in held[id].map { (id, $0) } } }
        pending.withLock { pending in
            for (id, value) in values { pending[id] = value }
        }
        moved.withLock { moved in
            for (id, value) in values { moved[id] = value }
        }
    }

    /// Keeps the cursors of the tasks `blocked` says from moving in this run: what their
    /// values fed failed, and the next run must fetch those items again.
    func withhold(_ blocked: (String) -> Bool) {
        let held = pending.withLock { pending in
            let held = pending.filter { blocked($0.key) }
            pending = pending.filter { !blocked($0.key) }
            return held
        }
        // A whole-job run keeps what it withheld, for a resume that completes the night.
        if shard == nil {
            withheld.withLock { withheld in
                for (id, value) in held where sinceIDs.contains(id) { withheld[id] = value }
            }
        }
        moved.withLock { moved in moved = moved.filter { !blocked($0.key) } }
    }

    /// Writes the recorded cursors into the file (merged with what it holds now), with the
    /// values withheld by run `run` (``RepairCursors``); `redeeming`: the `since` tasks whose
    /// kept values, from the given run, stood in for them in a whole-job resume in which
    /// every task they fed ended done: a value that run withheld becomes their cursor.
    func flush(run: String = "", redeeming: [String: String] = [:]) throws {
        let changes = pending.withLock { changes in
            defer { changes = [:] }
            return changes
        }
        let held = withheld.withLock { $0 }
        guard !changes.isEmpty || !held.isEmpty || !redeeming.isEmpty, unreadable == nil else {
            return
        }
        do {
            let folder = url.deletingLastPathComponent()
            try FileSystem.makeOwnFolder(folder)
            let lock = try FileLockGuard(folder.appendingPathComponent("since.lock"))
            defer { withExtendedLifetime(lock) {} }
            guard case .success(var cursors) = Self.load(url) else { return }
            var redeemed = false
            for (id, sourceRun) in redeeming where changes[id] == nil && held[id] == nil {
                guard let value = cursors[RepairCursors.key(id, run: sourceRun)] else { continue }
                RepairCursors.drop(id, in: &cursors)
                cursors[id] = value
                for key in ShardedCursors.superseded(by: id, in: cursors) { cursors[key] = nil }
                moved.withLock { $0[id] = value }
                redeemed = true
            }
            guard redeemed || !changes.isEmpty || !held.isEmpty else { return }
            for (id, value) in held {
                RepairCursors.drop(id, in: &cursors)
                cursors[RepairCursors.key(id, run: run)] = value
            }
            for (id, value) in changes {
                RepairCursors.drop(id, in: &cursors)
                guard everyShard.contains(id) else {
                    cursors[id] = value
                    continue
                }
                if let shard {
                    cursors[ShardedCursors.key(id, shard: shard)] = value
                } else {
                    cursors[id] = value
                    for key in ShardedCursors.superseded(by: id, in: cursors) { cursors[key] = nil }
                }
            }
            let document = StateDocument.bytes([
                (
                    "cursors",
                    .object(cursors.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
                )
            ])
            try OutputFile.write(Data(document), to: url, tag: tag)
            withheld.withLock { $0 = [:] }
        } catch {
            pending.withLock { pending in
                for (id, value) in changes where pending[id] == nil { pending[id] = value }
            }
            throw error
        }
    }

    /// Why the file cannot be read.
    typealias Unreadable = StateDocument.Unreadable

    /// The file's cursors: none when it does not exist; why not when it cannot be read.
    static func load(_ url: URL) -> Result<[String: String], Unreadable> {
        CursorFile.load(url)
    }
}
