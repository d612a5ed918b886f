import Courier

/// The files this run saved, by task: a second task's save to a file another task of the
/// run saved fails, rather than replace its answer (trial LLL: a literal `o/x.json` beside a
/// fan-out's `o/{i}.json` whose capture yielded `x` ran `4 ok`, one answer lost). Paths that
/// values name are known only as the run goes; validation judges what it can see
/// (``SaveCollisions``). Kept only for a job with two entries that save or more (one entry's
/// tasks never share a file: validation sees to that), each file as a 64-bit hash with its
/// task's.
final class SavedPaths: Sendable {
    private let claims = Locked<[UInt64: UInt64]>([:])
    let enabled: Bool

    init(job: Job) {
        enabled = job.tasks.filter { $0.save != nil }.count >= 2
    }

    /// Whether `task` may save `path` (under `outputDir`, as logged): no other task of this
    /// run saved it. The first task to save a path keeps it.
    func claim(_ path: String, task: String) -> Bool {
        guard enabled else { return true }
        let file = FNV1a.hash(RecordsRule.canonical(path).utf8)
        let owner = FNV1a.hash(task.utf8)
        return claims.withLock { claims in
            if let earlier = claims[file] { return earlier == owner }
            claims[file] = owner
            return true
        }
    }
}
