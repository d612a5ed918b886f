import Courier
import Foundation
import Testing

@testable import CourierJobs

/// The requests' clock (``StoppingTimeSource``): its waits end at the run's stop, and only then.
@Suite("StoppingTimeSource")
struct StoppingTimeSourceTests {
    @Test("a wait runs its course unless the run stops")
    func waitsRunTheirCourse() async throws {
        let time = StoppingTimeSource(SystemTimeSource())
        try await time.sleep(for: .milliseconds(5))
        #expect(!time.cutAWait)
    }

    @Test("the stop ends a wait under way, and refuses every later one")
    func stopEndsWaits() async throws {
        let time = StoppingTimeSource(SystemTimeSource())
        // An hour's wait: only the stop can end it before the hang guard.
        let waiting = Task { () -> Bool in
            do {
                try await time.sleep(for: .seconds(3600))
                return false
            } catch {
                return error is CancellationError
            }
        }
        // Stop until the wait has ended: a stop before the wait began is refused the same way.
        time.stop()
        #expect(await waiting.value, "ended by the stop, with CancellationError")
        #expect(time.cutAWait)
        await #expect(throws: CancellationError.self) {
            try await time.sleep(for: .milliseconds(1))
        }
    }

    @Test("a cancelled wait ends with CancellationError and leaves nothing behind")
    func cancelledWait() async throws {
        let time = StoppingTimeSource(SystemTimeSource())
        for _ in 0..<50 {
            let waiting = Task { try await time.sleep(for: .seconds(3600)) }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
        }
        // No waiter was left for the stop to count as cut.
        time.stop()
        #expect(!time.cutAWait)
    }
}
