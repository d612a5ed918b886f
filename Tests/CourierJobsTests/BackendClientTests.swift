import CourierCurl
import Foundation
import Testing

@testable import CourierJobs

/// The transport a run makes (``Backend/makeClient``): its limits follow the run's
/// concurrency.
@Suite("the run's transport")
struct BackendClientTests {
    @Test("curl keeps an idle handle for every task in flight, 256 at the least")
    func idleHandlesFollowConcurrency() throws {
        for (concurrency, idle) in [(512, 512), (64, 256), (0, 256)] {
            let client = try #require(
                Backend.curl.makeClient(maxConnectionsPerHost: concurrency) as? CurlHTTPClient)
            #expect(client.configuration.maxIdleHandles == idle, "\(concurrency)")
            #expect(
                client.configuration.maxConnectionsPerHost == (concurrency > 0 ? concurrency : 64))
        }
    }
}
