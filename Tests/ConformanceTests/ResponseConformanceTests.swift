import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Responses")
struct ResponseConformanceTests {
    @Test(
        "every status comes back as a response",
        arguments: TransportKind.allCases,
        [200, 201, 204, 301, 302, 303, 307, 308, 404, 418, 500, 503])
    func statusPassesThrough(transport: TransportKind, status: Int) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/status/\(status)")))
        #expect(response.status == status)
        #expect(response.redirectCount == 0)
        if (300..<400).contains(status) {
            #expect(response.headers["Location"] == "/echo", "3xx is returned, not followed")
        }
    }

    @Test("repeated response fields are all there", arguments: TransportKind.allCases)
    func repeatedResponseHeaders(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/headers-repeated")))
        let multi = response.headers.values(for: "x-multi")
        if transport.keepsRepeatedResponseFields {
            #expect(multi == ["a", "b"])
            #expect(response.headers.values(for: "Set-Cookie") == ["one=1", "two=2"])
        } else {
            #expect(multi.joined(separator: ", ") == "a, b")
        }
    }

    @Test("a 10 MiB body arrives whole", arguments: TransportKind.allCases)
    func largeBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let size = 10 << 20
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/bytes?n=\(size)")))
        #expect(response.body.count == size)
        let pattern = BytePattern.matches(response.body)
        #expect(pattern, "the body is the server's byte pattern")
    }

    @Test("a chunked body arrives whole", arguments: TransportKind.allCases)
    func chunkedBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/bytes?n=300000&chunked=1")))
        #expect(response.body.count == 300_000)
    }

    @Test("the response knows its URL and total time", arguments: TransportKind.allCases)
    func urlAndTimings(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let url = server.url("/echo")
        let response = try await transport.makeClient().perform(HTTPRequest(url: url))
        #expect(response.url == url)
        #expect(response.timings.total > 0)
    }
}
