import Courier
import CourierTestSupport
import Foundation
import Testing

/// Digest authentication against httpbin, a server nobody here wrote, on both transports:
/// MD5 and SHA-256, performed and streamed, and wrong credentials.
@Suite("Digest authentication")
struct DigestAuthConformanceTests {
    /// httpbin's digest routes also want their `fake` cookie sent back, so cookies are kept.
    static func client(_ transport: TransportKind, password: String = "passwd") -> some HTTPClient {
        DigestAuthenticatingHTTPClient(
            wrapping: CookieStoringHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())),
            user: "user", password: password)
    }

    @Test(
        "MD5 and SHA-256 challenges answered; later requests signed at once",
        arguments: TransportKind.allCases, ["MD5", "SHA-256"])
    func answered(transport: TransportKind, algorithm: String) async throws {
        let base = try await TestServers.httpbin()
        let url = URL(string: "\(base)/digest-auth/auth/user/passwd/\(algorithm)")!
        let client = Self.client(transport)
        let response = try await client.perform(HTTPRequest(url: url))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(object?["authenticated"] as? Bool == true)
        let streamed = try await client.stream(HTTPRequest(url: url))
        #expect(streamed.status == 200)
        #expect(try await streamed.body.collect() == response.body)
    }

    @Test("a wrong password: the 401 comes back, no loop", arguments: TransportKind.allCases)
    func wrongPassword(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let url = URL(string: "\(base)/digest-auth/auth/user/passwd/SHA-256")!
        let response = try await Self.client(transport, password: "nope").perform(
            HTTPRequest(url: url))
        #expect(response.status == 401)
    }
}
