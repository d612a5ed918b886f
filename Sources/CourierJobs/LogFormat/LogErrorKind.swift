/// `error.kind` values the runner itself writes on lines that sent nothing, in one place for the
/// writer and the readers (docs/log-format.md).
enum LogErrorKind {
    /// A write a resume or replay did not send again (``WriteRule``): a `task.skipped` line.
    static let writeHeld = "writeHeld"
}
