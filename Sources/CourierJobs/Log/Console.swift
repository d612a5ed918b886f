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
        Self.errorLines?.withLock { $0.append(redactor.scrub(text)) }
    }

    /// Where the error lines of a command are kept as well, when it binds one: `courier run
    /// --json` refused (exit 2 or 3) prints them as JSON, so that `… --json | jq` never reads
    /// empty input. Task-local: only the command's own task (and those it starts) records.
    @TaskLocal static var errorLines: Locked<[String]>?

    /// Clears the progress line (carriage return, erase to end of line), then writes `text`
    /// (escaped as every line is) on it: the one control sequence courier itself sends, and
    /// only where ``drawsOnStandardError`` allows (elsewhere the text is written as it is).
    func overwriteLine(_ text: String = "", newline: Bool = false) {
        let line = newline ? text + "\n" : text
        guard Self.drawsOnStandardError else {
            if !line.isEmpty { _ = write(line, to: STDERR_FILENO) }
            return
        }
        _ = write(line, to: STDERR_FILENO, after: Self.clearLine)
    }

    /// Whether courier may draw on standard error (the progress line): on a terminal that
    /// can (not `TERM=dumb`), unless `NO_COLOR` asks for plain text (no-color.org: set to
    /// anything but empty). Courier sends no colour; a progress line it does not draw is not
    /// shown at all.
    static let drawsOnStandardError = allowsDrawing(
        isTerminal: isatty(STDERR_FILENO) == 1,
        noColor: getenv("NO_COLOR").map { String(cString: $0) },
        term: getenv("TERM").map { String(cString: $0) })

    static func allowsDrawing(isTerminal: Bool, noColor: String?, term: String?) -> Bool {
        isTerminal && (noColor ?? "").isEmpty && term != "dumb"
    }

    private static let clearLine: [UInt8] = Array("\r\u{1B}[K".utf8)

    static func output(_ text: String) { _ = plain.output(text) }

    static func error(_ text: String, newline: Bool = true) {
        plain.error(text, newline: newline)
    }

    static func overwriteLine(_ text: String = "", newline: Bool = false) {
        plain.overwriteLine(text, newline: newline)
    }

    /// One `write(2)` of `prefix` (courier's own control bytes) and the escaped text.
    private func write(_ text: String, to descriptor: Int32, after prefix: [UInt8] = []) -> Bool {
        // Whatever reaches a terminal is shown, never obeyed: an escape, a C1 CSI or a bidi
        // override from a value cannot drive it.
        let bytes = prefix + Array(redactor.scrub(text).showingTerminalControls.utf8)
        return bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) } == nil
    }
}
