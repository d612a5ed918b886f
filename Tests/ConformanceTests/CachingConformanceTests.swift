import Courier
import CourierTestSupport
import Foundation
import Testing

/// The caching middleware over each real transport: a stored response is revalidated with the
/// server, whose 304 comes back to the caller as the stored 200.
@Suite("Caching")
struct CachingConformanceTests {
    @Test("revalidation against a real server", arguments: TransportKind.allCases)
    func revalidates(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("cache")
        let client = CachingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let url = server.url("/etag?v=7&cache=no-cache&key=\(key)")
        let first = try await client.perform(HTTPRequest(url: url))
        let second = try await client.perform(HTTPRequest(url: url))
        #expect(first.status == 200 && second.status == 200)
        #expect(first.body == second.body)
        #expect(String(decoding: second.body, as: UTF8.self).contains("\"version\": \"7\""))
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.count == 2)
        #expect(hits.requests.last?.header("If-None-Match") == "\"7\"")
    }
}
