import Courier
import CourierTestSupport
import Foundation
import Testing

/// ``CookieStoringHTTPClient`` over each transport, below the redirect layer.
@Suite("Cookies")
struct CookieConformanceTests {
    static func cookies(in response: HTTPResponse) throws -> Set<String> {
        let values = try Echo(response).values(for: "Cookie")
        return Set(
            values.flatMap { $0.split(separator: ";") }.map {
                $0.trimmingCharacters(in: .whitespaces)
            })
    }

    @Test(
        "a redirect's Set-Cookie is sent on the next hop and on later requests, to its origin only",
        arguments: TransportKind.allCases)
    func cookiesAcrossRedirects(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let store = CookieStore()
        let client = RedirectingHTTPClient(
            wrapping: CookieStoringHTTPClient(
                wrapping: AnyHTTPClient(transport.makeClient()), store: store))
        let setting = server.url(
            "/set-cookie?c=hop%3D1%3B%20Path%3D%2F&c=two%3D2%3B%20Expires%3DWed%2C%2009%20Jun%202100%2010%3A18%3A14%20GMT&to=/echo"
        )
        let first = try await client.perform(HTTPRequest(url: setting))
        #expect(first.status == 200)
        #expect(
            try Self.cookies(in: first) == ["hop=1", "two=2"], "sent on the redirect's next hop")
        var own = HTTPRequest(url: server.url("/echo"))
        own.headers.add("Cookie", "mine=0")
        #expect(
            try Self.cookies(in: try await client.perform(own)) == ["mine=0", "hop=1", "two=2"])
        let elsewhere = try await client.perform(HTTPRequest(url: server.otherHostURL("/echo")))
        #expect(try Self.cookies(in: elsewhere).isEmpty, "host-only cookies stay on their host")
        #expect(store.cookies.count == 2)
    }

    @Test("without the middleware no cookie is kept", arguments: TransportKind.allCases)
    func noJarNoCookies(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let response = try await client.perform(
            HTTPRequest(url: server.url("/set-cookie?c=a%3D1&to=/echo")))
        #expect(try Self.cookies(in: response).isEmpty)
    }
}
