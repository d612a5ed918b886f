import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Error {
    /// Whether this error means the work was cancelled rather than that it failed.
    ///
    /// A transport whose calling `Task` is cancelled throws ``HTTPError`` with `.cancelled`
    /// (it carries the URL, which `CancellationError` cannot); both transports do the same.
    /// Check this property to treat that, a `CancellationError` and `URLError(.cancelled)` alike:
    /// ```swift
    /// catch where error.isCancellation { return }
    /// ```
    public var isCancellation: Bool {
        switch self {
        case is CancellationError: true
        case let error as HTTPError: error.kind == .cancelled
        case let error as URLError: error.code == .cancelled
        default: false
        }
    }
}
