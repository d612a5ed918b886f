import Courier

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

    /// Writes a line to stdout; false when it could not be written (the reader went away),
    /// so that a long listing can stop.
    @discardableResult
    func output(_ text: String) -> Bool {
        write(text + "\n", to: STDOUT_FILENO)
    }

    func error(_ text: String, newline: Bool = true) {
        _ = write(newline ? text + "\n" : text, to: STDERR_FILENO)
    }

    static func output(_ text: String) { _ = plain.output(text) }

    static func error(_ text: String, newline: Bool = true) {
        plain.error(text, newline: newline)
    }

    private func write(_ text: String, to descriptor: Int32) -> Bool {
        let bytes = Array(redactor.scrub(text).utf8)
        return bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) } == nil
    }
}
