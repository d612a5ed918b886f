import Courier
import Foundation
import Testing

@testable import CourierJobs

/// The requests' clock (``StoppingTimeSource``): its waits end at the run's stop, and only then.
/// No test here waits on the real clock: the base clocks below end a wait at once, or never.
// The limit only guards a hang: a loaded `make test` starved the pool a minute long once.
@Suite("StoppingTimeSource", .timeLimit(.minutes(3)))
struct StoppingTimeSourceTests {
    /// A clock whose waits end at once.
    struct InstantTime: TimeSource {
        func now() -> ContinuousClock.Instant { .now }
        func date() -> Date { Date() }
        func sleep(for duration: Duration) async throws { try Task.checkCancellation() }
    }

    /// A clock whose waits end only when their task is cancelled: only the stop (or a cancel)
    /// can end a wait on it; the suite's time limit guards a hang.
    struct EndlessTime: TimeSource {
        func now() -> ContinuousClock.Instant { .now }
        func date() -> Date { Date() }
        func sleep(for duration: Duration) async throws {
            let (never, continuation) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            // Held to here: a continuation dropped would finish the stream at once.
            withExtendedLifetime(continuation) {}
            throw CancellationError()
        }
    }

    @Test("a wait runs its course unless the run stops")
    func waitsRunTheirCourse() async throws {
        let time = StoppingTimeSource(InstantTime())
        try await time.sleep(for: .seconds(3600))
        #expect(!time.cutAWait)
    }

    @Test("the stop ends a wait under way, and refuses every later one")
    func stopEndsWaits() async throws {
        let time = StoppingTimeSource(EndlessTime())
        let waiting = Task { () -> Bool in
            do {
                try await time.sleep(for: .seconds(1))
                return false
            } catch {
                return error is CancellationError
            }
        }
        // The stop comes once the wait is under way (a wait after it is refused, below).
        while time.waitsUnderWay == 0 { await Task.yield() }
        time.stop()
        #expect(await waiting.value, "ended by the stop, with CancellationError")
        #expect(time.cutAWait)
        await #expect(throws: CancellationError.self) {
            try await time.sleep(for: .seconds(1))
        }
    }

    @Test("a cancelled wait ends with CancellationError and leaves nothing behind")
    func cancelledWait() async throws {
        let time = StoppingTimeSource(EndlessTime())
        for _ in 0..<50 {
            let waiting = Task { try await time.sleep(for: .seconds(1)) }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
        }
        // No waiter was left for the stop to count as cut.
        time.stop()
        #expect(!time.cutAWait)
    }
}
