import Courier
import CourierTestSupport
import Foundation
import Testing

/// `RedirectingHTTPClient`'s handler: it sees each hop and follows it, changes the next request
/// or stops there; performed or streamed, on both transports.
@Suite("Redirect handler")
struct RedirectHandlerConformanceTests {
    @Test("the handler sees every hop, in order", arguments: TransportKind.allCases)
    func seesEveryHop(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let seen = Locked<[String]>([])
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            redirect, next in
            seen.withLock { $0.append("\(redirect.status) \(next.url.query ?? "")") }
            return next
        }
        let response = try await client.perform(HTTPRequest(url: server.url("/chain?n=3")))
        #expect(response.status == 200)
        #expect(response.redirectCount == 3)
        #expect(seen.withLock { $0 } == ["302 n=2", "302 n=1", "302 n=0"])
    }

    @Test(
        "stopping at a redirect returns it whole, performed or streamed",
        arguments: TransportKind.allCases)
    func stops(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            _, next in next.url.path == "/echo" ? nil : next
        }
        let request = HTTPRequest(url: server.url("/redirect?to=/echo&body=not-followed"))
        let performed = try await client.perform(request)
        #expect(performed.status == 302)
        #expect(performed.body == Data("not-followed".utf8))
        #expect(performed.redirectCount == 0)
        let streamed = try await client.stream(request)
        #expect(streamed.status == 302)
        #expect(try await streamed.body.collect() == Data("not-followed".utf8))
        // A hop before the stop is followed: the stop is at the second redirect.
        let twice = HTTPRequest(
            url: server.url("/redirect?to=%2Fredirect%3Fto%3D%2Fecho%26body%3Dsecond&body=first"))
        let streamedTwice = try await client.stream(twice)
        #expect(streamedTwice.status == 302)
        #expect(try await streamedTwice.body.collect() == Data("second".utf8))
        let performedTwice = try await client.perform(twice)
        #expect(performedTwice.body == Data("second".utf8))
        #expect(performedTwice.redirectCount == 1)
    }

    @Test("the handler can change the next request", arguments: TransportKind.allCases)
    func changes(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            redirect, next in
            var next = next
            next.headers.replaceOrAdd("X-Hop-From", String(redirect.status))
            return next
        }
        let request = HTTPRequest(url: server.url("/redirect?to=/echo&status=307"))
        for body in [
            try await client.perform(request).body,
            try await client.stream(request).body.collect(),
        ] {
            let echo = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            let headers = echo?["headers"] as? [[String]] ?? []
            #expect(headers.first { $0.first?.lowercased() == "x-hop-from" }?.last == "307")
        }
    }
}
