import Courier
import CourierTestSupport
import Foundation
import Testing

/// The same transports against httpbin, a server that is not ours.
@Suite("httpbin")
struct HTTPBinConformanceTests {
    struct Anything: Decodable {
        let method: String
        let data: String
        let headers: [String: String]
    }

    @Test("POST with a JSON body", arguments: TransportKind.allCases)
    func postJSON(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let request = HTTPRequest(
            url: base.appendingPathComponent("anything"), method: .post,
            headers: ["Content-Type": "application/json", "X-Courier": "yes"],
            body: Data(#"{"a":1}"#.utf8))
        let response = try await transport.makeClient().perform(request)
        let anything = try JSONDecoder().decode(Anything.self, from: response.body)
        #expect(response.status == 200)
        #expect(anything.method == "POST")
        #expect(anything.data == #"{"a":1}"#)
        #expect(anything.headers["X-Courier"] == "yes")
    }

    @Test("status codes and headers", arguments: TransportKind.allCases)
    func statusAndHeaders(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let client = transport.makeClient()
        let teapot = try await client.perform(
            HTTPRequest(url: base.appendingPathComponent("status/418")))
        #expect(teapot.status == 418)
        let headers = try await client.perform(
            HTTPRequest(url: URL(string: "\(base)/response-headers?X-Thing=courier")!))
        #expect(headers.headers["x-thing"] == "courier")
    }

    @Test("httpbin's redirects through the policy", arguments: TransportKind.allCases)
    func redirects(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let response = try await client.perform(
            HTTPRequest(url: base.appendingPathComponent("redirect/2")))
        #expect(response.status == 200)
        #expect(response.redirectCount == 2)
        #expect(response.url.path == "/get")
    }
}
