import Foundation

/// The rules on a write whose request another task's write sent: a task renamed since, or
/// ids swapped or rotated between writes, known by each write's `requestDigest`
/// (``WriteHistory/sameRequest(_:otherThan:)``).
extension WriteRule {
    /// The task whose write last sent the request `task` sends and did not happen (the
    /// server refused it, or it never left), when the write `task`'s id made was another
    /// request: the ids were swapped since, and `task` is not done by its id's write, but sent
    /// as that refused write is on a repair (trial QQQ: counted done, the refused write never
    /// made, in silence; trial TTT: held then, on every repair, until named). `nil` otherwise.
    static func swappedIn(_ task: ExpandedTask, job: String, writes: WriteHistory) -> String? {
        guard writes.knowsRequests, let digest = task.writeDigest else { return nil }
        return writes.refusedAs(digest, otherThan: FNV1a.taskKey(job: job, task: task.id))
    }

    /// Whether `task`, a write its id's answer would count done, now sends the request another
    /// task's write last sent: the ids were swapped since, and the request it sends is judged
    /// by what became of that write (answered: done; unknown: held; refused: sent), not by its
    /// id's (trial WWW: a swapped write whose night was cut under way was counted done by the
    /// other request's answer, and never made, exit 0).
    static func sentByAnother(_ task: ExpandedTask, job: String, writes: WriteHistory) -> Bool {
        guard writes.knowsRequests, let digest = task.writeDigest else { return false }
        return writes.sentByAnother(digest, otherThan: FNV1a.taskKey(job: job, task: task.id))
    }

    /// The task whose write a 2xx answered with the request `task` sends, when `task` would
    /// be held for it (``sentAsAnother(_:digest:job:writes:)``) and it has nothing else to do:
    /// it is done by that answer, as the night did it. A task renamed since (trial QQQ: held
    /// on every repair, exit 1, and `--task`, the only way out, made it again), and one whose
    /// id now sends another's answered request (ids swapped or rotated; trial TTT: held for
    /// ever, the same way out): the request it sends was made. Its id's own write, another
    /// request, is whichever task's sends it now (``swappedIn(_:job:writes:)``).
    /// `nil` otherwise.
    static func doneAsAnother(
        _ task: ExpandedTask, job: String, capturing: Bool, writes: WriteHistory
    ) -> String? {
        guard nothingElse(task, capturing: capturing) else { return nil }
        return doneAsAnother(task.id, digest: task.writeDigest, job: job, writes: writes)
    }

    /// The task whose write a 2xx answered with the request digested `digest`, which the
    /// write `id` sends: another task's (``doneAsAnother(_:job:capturing:writes:)``, for a
    /// write with nothing else to do, as a logged one a replay of the log alone sends is).
    static func doneAsAnother(_ id: String, digest: String?, job: String, writes: WriteHistory)
        -> String?
    {
        guard writes.knowsRequests, let digest,
            let (other, fact) = writes.sameRequest(
                digest, otherThan: FNV1a.taskKey(job: job, task: id)),
            case .answered = fact
        else { return nil }
        return other
    }

    /// What a write done by another task's answer is said to be, in a dry run's plan.
    static func doneAs(_ other: String) -> String {
        "it sends the same request as task \(other)'s write, which a 2xx answered, and it has nothing else to do: done by that answer"
    }

    /// Why a write is not sent whose own last line was another request, or which has none:
    /// another task's write sent this request (method, URL and body: its `requestDigest`),
    /// answered 2xx or with its outcome unknown, so that it is that write under a new id, and
    /// sending it would make it again (trial HHH: a task renamed between a failed night and
    /// its resume made its charge twice, the new id's idempotency key another; trial OOO: two
    /// writes' ids swapped). `nil` for any other write.
    static func sentAsAnother(_ id: String, digest: String?, job: String, writes: WriteHistory)
        -> String?
    {
        guard writes.knowsRequests, let digest,
            let (other, fact) = writes.sameRequest(
                digest, otherThan: FNV1a.taskKey(job: job, task: id))
        else { return nil }
        let (what, then) =
            switch fact {
            case .answered(let run, let status):
                (
                    "answered \(status) by run \(run)",
                    "it was made: name it (--task \(id)) only to make it again"
                )
            case .unknown(let run):
                (
                    "sent in run \(run), and no answer says what became of it",
                    "check the server, then name it (--task \(id)) to send it"
                )
            }
        return
            "it sends the same request (method, URL, body and headers) as task \(other)'s write, \(what): a task renamed since is the same write, and a resume or replay never sends a write twice; \(then)"
    }
}
