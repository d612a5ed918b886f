#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to the standard streams; every user-facing line goes through here, and through the
/// run's ``Redactor`` on the way out.
///
/// Writes are plain `write(2)` calls: a closed pipe (`courier … | head`) or a closed stderr
/// costs the line, never the run (SIGPIPE is ignored by ``CommandLineInterface``).
struct Console: Sendable {
    let redactor: Redactor

    /// A console for messages that carry no job data.
    static let plain = Console(redactor: Redactor(secrets: []))

    func output(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    func error(_ text: String, newline: Bool = true) {
        write(newline ? text + "\n" : text, to: STDERR_FILENO)
    }

    static func output(_ text: String) { plain.output(text) }

    static func error(_ text: String, newline: Bool = true) {
        plain.error(text, newline: newline)
    }

    private func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(redactor.scrub(text).utf8)
        _ = bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
    }
}
