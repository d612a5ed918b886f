import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Redirects through the redirect policy")
struct RedirectConformanceTests {
    @Test("same-host redirects are followed", arguments: TransportKind.allCases)
    func sameHostChain(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let response = try await client.perform(HTTPRequest(url: server.url("/chain?n=3")))
        #expect(response.status == 200)
        #expect(response.redirectCount == 3)
        #expect(response.url == server.url("/chain?n=0"))
    }

    @Test("same-host redirects keep credentials", arguments: TransportKind.allCases)
    func sameHostKeepsAuthorization(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let request = HTTPRequest(
            url: server.url("/redirect?to=/echo"), headers: ["Authorization": "Bearer same"])
        let echo = try Echo(try await client.perform(request))
        #expect(echo.values(for: "Authorization") == ["Bearer same"])
    }

    /// A request with credentials (a secret header among them) that the server redirects to
    /// another host's `/echo`.
    static func credentialsToAnotherHost(_ server: FixtureServer) -> HTTPRequest {
        let target = server.otherHostURL("/echo").absoluteString
        return HTTPRequest(
            url: server.url("/redirect?to=\(URLBuilder.percentEncode(target))"),
            headers: [
                "Authorization": "Bearer secret-token", "Cookie": "session=secret",
                "X-Api-Key": "secret-key", "X-Keep": "kept",
            ],
            secretHeaderNames: ["X-Api-Key"])
    }

    @Test(
        "a cross-host redirect drops Authorization, Cookie and secret headers",
        arguments: TransportKind.allCases)
    func crossHostDropsCredentials(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let request = Self.credentialsToAnotherHost(server)
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let response = try await client.perform(request)
        let echo = try Echo(response)
        #expect(response.url.host == "localhost")
        #expect(response.redirectCount == 1)
        #expect(echo.values(for: "Authorization").isEmpty)
        #expect(echo.values(for: "Cookie").isEmpty)
        #expect(echo.values(for: "X-Api-Key").isEmpty)
        #expect(echo.values(for: "X-Keep") == ["kept"])
    }

    @Test(
        "a cross-host redirect drops the credentials streamed and downloaded too",
        arguments: TransportKind.allCases)
    func crossHostDropsCredentialsStreamedAndDownloaded(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let request = Self.credentialsToAnotherHost(server)
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let streamed = try await client.stream(request)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cross-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("echo.json")
        let downloaded = try await client.download(request, to: file)
        for (how, body, status) in [
            ("streamed", try await streamed.body.collect(), streamed.status),
            ("downloaded", try Data(contentsOf: file), downloaded.status),
        ] {
            #expect(status == 200, "\(how)")
            let echo = try JSONDecoder().decode(Echo.self, from: body)
            #expect(echo.values(for: "Authorization").isEmpty, "\(how)")
            #expect(echo.values(for: "Cookie").isEmpty, "\(how)")
            #expect(echo.values(for: "X-Api-Key").isEmpty, "\(how)")
            #expect(echo.values(for: "X-Keep") == ["kept"], "\(how)")
            #expect(echo.values(for: "Host").first?.hasPrefix("localhost") == true, "\(how)")
        }
    }

    @Test("a redirect loop is stopped", arguments: TransportKind.allCases)
    func loop(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let error = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.url("/loop")))
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(error.status == 302, "the answer that was not followed")
    }

    @Test("a long chain stops at the hop limit", arguments: TransportKind.allCases)
    func hopLimit(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient()), maxHops: 2)
        let error = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.url("/chain?n=3")))
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(error.status == 302, "the answer that was not followed")
    }

    @Test(
        "303 turns POST into a GET without body; 307 keeps both",
        arguments: TransportKind.allCases,
        [(303, "GET", 0), (302, "GET", 0), (307, "POST", 4), (308, "POST", 4)])
    func methodRewrite(transport: TransportKind, rule: (status: Int, method: String, length: Int))
        async throws
    {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let request = HTTPRequest(
            url: server.url("/redirect?to=/echo&status=\(rule.status)"), method: .post,
            headers: ["Content-Type": "text/plain"], body: Data("data".utf8))
        let echo = try Echo(try await client.perform(request))
        #expect(echo.method == rule.method)
        #expect(echo.bodyLength == rule.length)
    }
}
