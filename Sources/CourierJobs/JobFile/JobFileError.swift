import Foundation

/// Something wrong with a job file, located by file, JSON path and (where known) line:column.
///
/// Printed as `jobs/nightly.json:12:5: tasks[3].foreach.n.range: expected [from, to] …`.
public struct JobFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// The JSON path, for example `tasks[3].foreach.n.range`; empty for the whole file.
    public var path: String
    public var message: String
    public var line: Int?
    public var column: Int?

    public init(file: String, path: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.path = path
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        var location = file
        if let line, line > 0 {
            location += ":\(line)"
            if let column, column > 0 { location += ":\(column)" }
        }
        return path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}

/// One or more job-file errors, all found in one pass.
public struct JobFileErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [JobFileError]
    public var description: String { errors.map(\.description).joined(separator: "\n") }

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
