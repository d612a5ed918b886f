import Foundation

/// Something wrong with a job file, located by file, JSON path and (where known) line:column.
///
/// Printed as `jobs/nightly.json:12:5: tasks[3].foreach.n.range: expected [from, to] …`.
struct JobFileError: Error, Sendable, Hashable, CustomStringConvertible {
    var file: String
    /// The JSON path, for example `tasks[3].foreach.n.range`; empty for the whole file.
    var path: String
    var message: String
    var line: Int?
    var column: Int?

    init(file: String, path: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.path = path
        self.message = message
        self.line = line
        self.column = column
    }

    /// An error about a task's entry, placed at where the entry starts.
    init(file: String, spec: TaskSpec, key: String, message: String) {
        self.init(
            file: file, path: "\(spec.path).\(key)", message: message,
            line: spec.position?.line, column: spec.position?.column)
    }

    var description: String {
        var location = file
        if let line, line > 0 {
            location += ":\(line)"
            if let column, column > 0 { location += ":\(column)" }
        }
        let text = path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
        // Values from lines files and captures reach these messages: a NUL, an escape or a
        // carriage return is shown, never sent to the terminal as it is.
        return text.showingControlCharacters
    }
}

extension String {
    /// The text with every character that could move the cursor, end the line or drive the
    /// terminal written as a `\u{1B}`-style escape: C0 controls (tab aside) including newline,
    /// DEL, C1 controls (U+009B is a one-byte CSI), line and paragraph separators and bidi
    /// overrides. For lines that carry values (ids, captured values, messages): a value must
    /// not forge a second line or a summary.
    var showingControlCharacters: String { escaping { Self.isHidden($0) || $0 == "\n" } }

    /// The same, newlines kept: for whole texts of several lines (``Console`` applies it to
    /// everything it prints).
    var showingTerminalControls: String { escaping(Self.isHidden) }

    private func escaping(_ hidden: (Unicode.Scalar) -> Bool) -> String {
        guard unicodeScalars.contains(where: hidden) else { return self }
        var shown = ""
        for scalar in unicodeScalars {
            if hidden(scalar) {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (value < 0x20 && scalar != "\t" && scalar != "\n") || (0x7F...0x9F).contains(value)
            || value == 0x2028 || value == 0x2029 || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}

/// One or more job-file errors, all found in one pass.
struct JobFileErrors: Error, Sendable, CustomStringConvertible {
    var errors: [JobFileError]
    var description: String { errors.map(\.description).joined(separator: "\n") }

    /// The errors with every secret value replaced by `<redacted>`.
    func scrubbed(with redactor: Redactor) -> JobFileErrors {
        JobFileErrors(
            errors: errors.map { error in
                var copy = error
                copy.message = redactor.scrub(error.message)
                copy.path = redactor.scrub(error.path)
                return copy
            })
    }
}
