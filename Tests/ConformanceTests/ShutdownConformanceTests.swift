import Courier
import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// `shutdown()` on both transports: requests under way end with `.cancelled` at once, and
/// later ones fail the same way without being sent.
@Suite("Shutdown")
struct ShutdownConformanceTests {
    @Test(
        "pending requests end cancelled; later ones are refused", .timeLimit(.minutes(3)),
        arguments: TransportKind.allCases)
    func shutdown(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("shutdown")
        let client = transport.makeClient()
        let pending = (0..<3).map { _ in
            Task {
                try await client.perform(
                    HTTPRequest(url: server.url("/slow?ms=600000&key=\(key)"), timeout: 900))
            }
        }
        // Wait (up to 1,200 looks) until the server has all three in hand. They last ten
        // minutes, beyond the suite's time limit: one answered instead of cancelled would
        // have to wait for the server, and the limit (a hang guard) ends the test.
        struct InFlight: Decodable { let current: Int }
        for _ in 0..<1_200 {
            let count = try await ProbeClient().decode(
                InFlight.self, from: server.url("/concurrency?key=\(key)"))
            if count.current == 3 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        switch client {
        case let curl as CurlHTTPClient: curl.shutdown()
        case let session as URLSessionHTTPClient: session.shutdown()
        default: Issue.record("no shutdown for \(type(of: client))")
        }
        for request in pending {
            do {
                _ = try await request.value
                Issue.record("a pending request was answered")
            } catch let error as HTTPError {
                #expect(error.kind == .cancelled, "\(error)")
            }
        }
        do {
            _ = try await client.perform(HTTPRequest(url: server.url("/echo?key=\(key)-after")))
            Issue.record("a request after shutdown was sent")
        } catch let error as HTTPError {
            #expect(error.kind == .cancelled)
        }
        #expect(try await ServerHits.of("\(key)-after", on: server).requests.isEmpty)
    }
}
