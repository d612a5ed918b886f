import Courier
import Foundation

/// A clock that only moves when something sleeps on it, recording each sleep: rate-limit and
/// retry timing can be checked exactly and instantly.
public final class ManualTimeSource: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    private let origin = ContinuousClock.now
    private let dateOrigin = Date(timeIntervalSince1970: 1_800_000_000)
    private var offset: Duration = .zero
    private var recorded: [Duration] = []

    public init() {}

    /// Every sleep requested so far, in order.
    public var sleeps: [Duration] { lock.withLock { recorded } }

    public func now() -> ContinuousClock.Instant { lock.withLock { origin.advanced(by: offset) } }

    public func date() -> Date {
        lock.withLock {
            dateOrigin.addingTimeInterval(
                Double(offset.components.seconds) + Double(offset.components.attoseconds) / 1e18)
        }
    }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        lock.withLock {
            recorded.append(duration)
            offset += duration
        }
    }

}
