@testable import CourierJobs
import Testing

/// Failures are grouped by their reason's shape: measurements differ from task to task, the
/// reason does not.
@Suite("Failure groups")
struct FailureReporterTests {
    @Test func measurementsAreOneReasonOtherNumbersAreNot() {
        let shape = FailureReporter.shape(of:)
        #expect(
            shape("Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server")
                == shape(
                    "Failed to connect to 127.0.0.1 port 9 after 14 ms: Couldn't connect to server")
        )
        #expect(
            shape("Operation timed out after 30001 milliseconds with 0 bytes received")
                == shape("Operation timed out after 30000 milliseconds with 512 bytes received"))
        #expect(shape("status 500, expected 2xx") != shape("status 404, expected 2xx"))
        #expect(shape("port 9 refused") != shape("port 10 refused"))
        #expect(shape("ends in 42") == "ends in 42")
    }
}
