import Foundation

/// Where middleware get the time and wait: the system clock in production, a manual one in tests.
public protocol TimeSource: Sendable {
    /// The current instant.
    func now() -> ContinuousClock.Instant
    /// The current wall-clock date, for HTTP-dates such as `Retry-After`.
    func date() -> Date
    /// Waits; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clocks.
public struct SystemTimeSource: TimeSource {
    public init() {}
    public func now() -> ContinuousClock.Instant { .now }
    public func date() -> Date { Date() }
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
