import Foundation

/// Why following pages stopped with an error: a next URL that is not http(s), or a page that
/// would be fetched again (a loop).
public struct PaginationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public var message: String

    public init(message: String) { self.message = message }

    public var description: String { message }
}

extension PaginationError: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
