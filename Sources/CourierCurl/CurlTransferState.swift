/// Where a transfer is in its life, as its event loop sees it (loop thread only).
///
/// ```
///   submit
///     │
///     ▼
///   queued ── cancelled or stopping before it started, or not added ──► finished
///     │ added to the multi handle                                         ▲
///     ▼                                                                   │
///   running(head) ─────────── curl done, cancel, shutdown ────────────────┤
///     │ first body byte                                                   │
///     ▼                                                                   │
///   running(body) ─────────── curl done, cancel, shutdown ────────────────┤
///     │        ▲                                                          │
///     │ reader │ reader                                                   │
///     │ full   │ caught up                                                │
///     ▼        │                                                          │
///   paused ────┴───────────── curl done, cancel, shutdown ────────────────┘
/// ```
///
/// `finished` says what the transfer came to: `answered`, `failed` or `cancelled`.
///
/// Each transition is a `mutating` method that returns what the loop must do (the easy handle
/// to remove or unpause, whether to start); a transition the loop should never ask for is
/// asserted. The easy handle travels in the states that own one, so a transfer has a handle
/// exactly while it is in the multi handle. An enum of a pointer and two small enums: no
/// allocation, as the transfer's old `handle` field.
enum CurlTransferState: Equatable {
    /// Handed to the loop (in its inbox), not yet added to the multi handle.
    case queued
    /// In the multi handle on this easy handle, reading the response's head or its body.
    case running(UnsafeMutableRawPointer, Reception)
    /// In the multi handle, held by `CURL_WRITEFUNC_PAUSE`: the streaming reader is behind.
    case paused(UnsafeMutableRawPointer)
    /// Out of the multi handle (or never in it), its caller resumed or being resumed.
    case finished(Ending)

    /// How far a running transfer's response has come.
    enum Reception: Equatable {
        /// Header lines (every response's, 1xx included), until the first body byte.
        case head
        /// Body bytes have come: the final head is complete and its coding was decided.
        case body
    }

    /// What a finished transfer came to.
    enum Ending: Equatable {
        /// A response (``CurlOutcome`` returned one).
        case answered
        /// An ``HTTPError`` other than a cancellation: curl's, the outcome's, or a failed start.
        case failed
        /// The caller's cancellation or the client's shutdown ended it.
        case cancelled
    }

    /// What the loop does with a transfer it takes from its inbox.
    enum Admission: Equatable {
        /// Prepare a handle and add it to the multi handle (then ``added(_:)``).
        case start
        /// Resume the caller with `.cancelled`; it never reaches curl.
        case refuse
    }

    /// The easy handle, while the transfer is in the multi handle.
    var handle: UnsafeMutableRawPointer? {
        switch self {
        case .running(let handle, _), .paused(let handle): handle
        case .queued, .finished: nil
        }
    }

    /// The loop takes a queued transfer from its inbox; `cancelled` when the caller cancelled
    /// it before that or the loop is stopping.
    mutating func admit(cancelled: Bool) -> Admission {
        assert(self == .queued, "admitted twice: \(self)")
        guard !cancelled else {
            self = .finished(.cancelled)
            return .refuse
        }
        return .start
    }

    /// The transfer is in the multi handle, on `handle`.
    mutating func added(_ handle: UnsafeMutableRawPointer) {
        assert(self == .queued, "added twice: \(self)")
        self = .running(handle, .head)
    }

    /// No handle could be made, or the multi handle refused it.
    mutating func notAdded() {
        assert(self == .queued, "not queued: \(self)")
        self = .finished(.failed)
    }

    /// A body byte has come (write callback); true the first time, when the coding is decided.
    @inline(__always)
    mutating func bodyArrived() -> Bool {
        guard case .running(let handle, .head) = self else { return false }
        self = .running(handle, .body)
        return true
    }

    /// The write callback returns `CURL_WRITEFUNC_PAUSE`: curl holds the transfer.
    mutating func pause() {
        switch self {
        case .running(let handle, .body): self = .paused(handle)
        case .paused: break
        default: assertionFailure("paused before its body or out of the multi handle: \(self)")
        }
    }

    /// The reader caught up: the handle to unpause, if the transfer is paused. A transfer that
    /// finished or was dropped meanwhile has nothing to unpause. Running again first, since
    /// `curl_easy_pause` may call the write callback, which may pause it again, at once.
    mutating func resume() -> UnsafeMutableRawPointer? {
        guard case .paused(let handle) = self else { return nil }
        self = .running(handle, .body)
        return handle
    }

    /// The caller cancelled, or the client shut down: the handle to remove from the multi
    /// handle, when the transfer is in it. A queued one is left to its cancellation flag,
    /// which ``admit(cancelled:)`` reads; a finished one has nothing left to stop.
    mutating func cancel() -> UnsafeMutableRawPointer? {
        guard let handle else { return nil }
        self = .finished(.cancelled)
        return handle
    }

    /// curl finished the transfer (`curl_multi_info_read`), and ``CurlOutcome`` decided.
    mutating func curlFinished(answered: Bool) {
        assert(handle != nil, "curl finished a transfer not in the multi handle: \(self)")
        self = .finished(answered ? .answered : .failed)
    }
}
