import Courier

/// `error.kind` values the runner itself writes on lines that sent nothing, in one place for the
/// writer and the readers (docs/log-format.md).
enum LogErrorKind {
    /// A write a resume or replay did not send again (``WriteRule``): a `task.skipped` line.
    static let writeHeld = "writeHeld"
    /// A task whose records failed: not extracted, or (a `task.skipped` line of a replay)
    /// kept by an earlier run but older than their file, and not taken.
    static let records = "records"

    /// Every kind a task's line may carry: the transports' (``HTTPError/Kind``) and the
    /// runner's own. `replay --error-kind` takes only these, so that a typo is refused rather
    /// than matching nothing in silence.
    static let known: [String] =
        [
            HTTPError.Kind.timeout, .connect, .dns, .tls, .network, .badResponse, .bodyTooLarge,
            .tooManyRedirects, .invalidURL, .invalidRequest, .cancelled, .throttled, .file,
            .unsupported,
        ].map(\.rawValue) + [
            "unexpectedStatus", "expectation", "responseAction", "capture", "pagination",
            records, "save", "token", "skipped", writeHeld, "invalidTask",
        ]
}
