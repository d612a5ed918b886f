/// What a job's history says about its writes (POST and PATCH requests): which were answered
/// 2xx, and which were cut off while under way, so that their outcome is unknown. Folded from
/// every log of the history, log-only replays included (they sent what they sent), by
/// ``TaskHistory``; ``WriteRule`` decides from it what `--resume` and `replay` send again.
///
/// A write with an idempotency key is known by its task and its key as well: the key is drawn
/// from the request (``IdempotencyKey``), so another night's write of the same task with
/// another body or URL is another write, and what became of one says nothing of the other
/// (trial ZZ: a later night's answered charge held the failed night's, which never happened).
/// A write sent without a key is known by its task alone.
///
/// Memory: one entry per task whose write was answered 2xx or is unknown, one per such keyed
/// write, and one per such request (by its `requestDigest`, whichever task sent it).
struct WriteHistory: Sendable {
    /// What is known of one task's write.
    enum Fact: Sendable, Equatable {
        /// A 2xx answered it (in `run`): the server took it, whatever the task's outcome.
        case answered(run: String, status: Int)
        /// Its last attempt went out (in `run`) and no answer says what became of it: the run
        /// was cut off, or the attempt failed after it may have reached the server.
        case unknown(run: String)
    }

    private(set) var facts: [UInt64: Fact] = [:]
    /// Writes a 2xx answered on their task's `ok` line, a replay's from the log alone too
    /// (``WriteRule/doneByAnswer(_:key:capturing:writes:)``).
    private(set) var answeredOK: Set<UInt64> = []
    /// Tasks whose write went out (a `request.start`) since their last attempt's line.
    private var started: Set<UInt64> = []
    /// Which of these tasks the history says are done (their final outcome is `ok`), and of
    /// their keyed writes (``key(task:write:)``), the one whose `ok` did it.
    var done: Set<UInt64> = []
    /// The idempotency key each keyed write not done carried in its last attempt in the runs a
    /// repair completes (``WriteRule/changedSince(_:_:job:writes:)``): by task.
    var nightKeys: [UInt64: String] = [:]
    /// Tasks a write went out for without its key (an older log's, or the task had none then):
    /// what became of it is known by the task alone.
    private var unkeyed: Set<UInt64> = []
    /// Each write request's digest (`requestDigest`), with the task whose write last sent it,
    /// and each task's last digest: a repair knows by them a write that a task renamed since
    /// sent under its old id, or another task sent before ids were swapped
    /// (``sameRequest(_:otherThan:)``).
    private var byDigest: [String: (key: UInt64, task: String)] = [:]
    private var digestOf: [UInt64: String] = [:]
    /// Why no history could be read beside the logs a replay of the logs alone sends (their
    /// `run.start` left out of a pipe or a copy, read from another folder): whether a later
    /// run made a write cannot be known, and each is held unless named (trial OOO: a filtered
    /// pipe's answered writes were made again). `nil` when the history was found.
    var unknownHistory: String?

    /// Transport errors that say a request never reached the server: its write did not happen.
    static let notSentKinds: Set<String> = [
        "invalidURL", "invalidRequest", "dns", "connect", "tls", "throttled", "unsupported",
    ]

    /// The key the history knows a write of `task` (``FNV1a/taskKey(job:task:)``) by:
    /// `write`, its idempotency key (`nil` when it goes without one), joined to the task's,
    /// unless the task has a write sent without a key, which the task alone keeps.
    func key(task: UInt64, write: String?) -> UInt64 {
        guard let write, !unkeyed.contains(task) else { return task }
        return Self.joined(task, write)
    }

    /// Whether the history knows `task`'s writes by their keys: none went out without one.
    func knowsByKey(_ task: UInt64) -> Bool { !unkeyed.contains(task) }

    /// The key the history knows a request by, apart from any task: its digest's.
    private static func requestKey(_ digest: String) -> UInt64 {
        FNV1a.hash(("request " + digest).utf8)
    }

    private static func joined(_ task: UInt64, _ write: String) -> UInt64 {
        withUnsafeBytes(of: task.littleEndian) { FNV1a.hash(write.utf8, into: FNV1a.hash($0)) }
    }

    /// Folds one line of the task `key` (its `request.start` and `request` lines; others are
    /// ignored), under the task and, when it carried one, under its idempotency key.
    mutating func add(_ line: LogLine, key: UInt64) {
        // A line that says `safe` is a POST that reads (a page of a search): not a write.
        guard let method = line.method, WriteSettings.writes(method), !line.safe else { return }
        if let digest = line.requestDigest, let earlier = digestOf[key], earlier != digest,
            case .answered = facts[key]
        {
            // Another request under the id of one a 2xx answered (its id now sends another
            // task's): that answer was the other request's, and says nothing of this one
            // (trial YYY: a refused write without a key, sent again under such an id, was
            // counted done by the answer to the other request, and never made).
            facts[key] = nil
            answeredOK.remove(key)
        }
        fold(line, key: key)
        if let digest = line.requestDigest, let task = line.task {
            byDigest[digest] = (key, task)
            digestOf[key] = digest
            // What became of this request, whichever task sent it: a task's own fact is of its
            // latest write, another request after ids were swapped (trial WWW: the answer to
            // a task's new request was taken for its old one's, which was never made).
            fold(line, key: Self.requestKey(digest))
        }
        if let write = line.idempotencyKey {
            fold(line, key: Self.joined(key, write))
        } else {
            unkeyed.insert(key)
        }
    }

    /// A 2xx stands for good: a later run cannot undo a write the server took.
    private mutating func fold(_ line: LogLine, key: UInt64) {
        if case .answered = facts[key] { return }
        if line.event == LogEvent.requestStart {
            facts[key] = .unknown(run: line.run)
            started.insert(key)
        } else if line.event == LogEvent.request {
            let wentOut = started.remove(key) != nil
            if let status = line.status {
                facts[key] =
                    (200..<300).contains(status) ? .answered(run: line.run, status: status) : nil
                if (200..<300).contains(status), line.outcome == LogOutcome.ok.rawValue {
                    answeredOK.insert(key)
                }
            } else if let kind = line.errorKind, Self.notSentKinds.contains(kind) {
                facts[key] = nil
            } else if line.errorKind == "cancelled", !wentOut {
                // Cancelled before it went out (a stop ended its wait for a retry, its host
                // or the rate limit: no `request.start`): what the earlier attempts left
                // stands. It was held as unknown for good (trial O).
            } else {
                facts[key] = .unknown(run: line.run)
            }
        }
    }

    subscript(key: UInt64) -> Fact? { facts[key] }

    /// The task whose write last sent the request `digest` names and did not happen (refused,
    /// or never left), when `task`'s own last write was another request: the two ids were
    /// swapped since (trial QQQ). `nil` otherwise.
    func refusedAs(_ digest: String, otherThan task: UInt64) -> String? {
        guard let own = digestOf[task], own != digest, let sender = byDigest[digest],
            sender.key != task, facts[Self.requestKey(digest)] == nil
        else { return nil }
        return sender.task
    }

    /// Whether the request `digest` names was last sent by another task than `task`, whose own
    /// last write was another request: the ids were swapped since, and `task` is not done by
    /// its id's write, whatever became of it (``WriteRule``).
    func sentByAnother(_ digest: String, otherThan task: UInt64) -> Bool {
        guard let own = digestOf[task], own != digest, let sender = byDigest[digest] else {
            return false
        }
        return sender.key != task
    }

    /// Whether any line says a request of the write digested `digest` went out.
    var knowsRequests: Bool { !byDigest.isEmpty }

    /// The task that last sent the request `digest` names, and what became of it (answered
    /// 2xx, or unknown), when that is another task than `task`, whose own last write was
    /// another request, none, or one that did not happen: the same write under another id (a
    /// task renamed since, or ids swapped between two writes; trial OOO; and the night's
    /// refused write that a repair made under the new id, which a replay of the night's log
    /// alone made again; trial RRR). `nil` otherwise.
    func sameRequest(_ digest: String, otherThan task: UInt64) -> (task: String, fact: Fact)? {
        guard digestOf[task] != digest || facts[task] == nil,
            let sender = byDigest[digest], sender.key != task,
            let fact = facts[Self.requestKey(digest)]
        else { return nil }
        return (sender.task, fact)
    }

    /// This history with `other`'s beside it (logs read from a pipe, which cannot be read
    /// again with the job's): a write either answered stays answered; one either leaves
    /// unknown stays unknown unless the other says it was answered.
    func merging(_ other: WriteHistory) -> WriteHistory {
        var merged = self
        for (key, fact) in other.facts {
            switch (merged.facts[key], fact) {
            case (.answered, _): continue
            case (_, .answered), (nil, _): merged.facts[key] = fact
            case (.unknown, .unknown): continue
            }
        }
        merged.answeredOK.formUnion(other.answeredOK)
        merged.unkeyed.formUnion(other.unkeyed)
        merged.digestOf.merge(other.digestOf) { mine, _ in mine }
        merged.byDigest.merge(other.byDigest) { mine, _ in mine }
        merged.done.formUnion(other.done)
        return merged
    }
}
