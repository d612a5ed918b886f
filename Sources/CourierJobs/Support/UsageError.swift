/// A command line that cannot be run as written (exit status 2).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
