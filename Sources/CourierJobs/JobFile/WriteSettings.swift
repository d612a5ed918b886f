import Courier

/// What a task says about sending its request more than once: `idempotencyKey` and `safe`
/// (docs/job-file.md, "Writes that happen once").
///
/// A task is a *write* when its method is POST or PATCH and it is not `safe`; without a `safe`
/// of its own, a POST that pages (a search, a GraphQL query) or captures a secret (a login,
/// whose token a later task's `auth` takes) reads, and is not. `--resume` and
/// `replay` never send again a write the job's history says was answered 2xx, and send again
/// one whose outcome is unknown (cut off while it was under way) only with its key
/// (``WriteRule``).
struct WriteSettings: Sendable, Equatable {
    /// The header the task's idempotency key goes in (`Idempotency-Key` for `true`); `nil`
    /// when the task asks for none.
    var keyHeader: String?
    /// `safe`: the request changes nothing on the server (a login, a search sent by POST),
    /// so it may be sent again like a GET; `nil` when the job file does not say.
    var safe: Bool?

    /// The methods that write: sending one twice may do its effect twice (RFC 9110 §9.2.2).
    static func writes(_ method: String) -> Bool {
        method == HTTPMethod.post.rawValue || method == HTTPMethod.patch.rawValue
    }
}

extension TaskSpec {
    /// Whether the task is a write (``WriteSettings``): set once its captures are linked
    /// (``CaptureLinker`` marks those a task's `auth` takes as secret).
    var isWrite: Bool {
        WriteSettings.writes(method.rawValue)
            && !(writes.safe ?? (paginate != nil || captures.contains { $0.secret }))
    }
}
