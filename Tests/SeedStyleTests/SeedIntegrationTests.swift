import Courier
import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// The seed-style client against a real loopback server, on both transports: queries, headers
/// and bodies declared the seeds' way reach the server, and the token goes as a Bearer header.
@Suite("seed-style client against a server")
struct SeedIntegrationTests {
    static func client(_ transport: TransportKind, server: FixtureServer, apiKey: String)
        -> MyServiceClient
    {
        switch transport {
        case .urlSession:
            return MyServiceClient(baseURL: server.baseURL, apiKey: apiKey)
        case .curl:
            let configuration = APIConfiguration(baseURL: server.baseURL, apiKey: apiKey)
            let apiClient = DefaultAPIClient(
                httpClient: CurlHTTPClient(), configuration: configuration)
            return MyServiceClient(apiClient: apiClient, configuration: configuration)
        }
    }

    @Test("listUsers sends page, per_page and q", arguments: TransportKind.allCases)
    func listUsers(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = Self.client(transport, server: server, apiKey: "seed-token")
        let page = try await client.users.listUsers(page: 1, perPage: 1, query: "swift")
        #expect(page.totalResults == 2, "the server filtered by q")
        #expect(page.totalPages == 2, "the server paged by per_page")
        #expect(page.results.map(\.name) == ["Swift"])
        let second = try await client.users.listUsers(page: 2, perPage: 1, query: "swift")
        #expect(second.results.map(\.name) == ["Swiftie"])
        #expect(second.results.first?.avatarURL == URL(string: "https://example.com/4.png"))
    }

    @Test(
        "getUser decodes the user; a wrong key is an API error", arguments: TransportKind.allCases)
    func getUser(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let user = try await Self.client(transport, server: server, apiKey: "seed-token").users
            .getUser(id: "3")
        #expect(user.name == "Grace" && user.createdAt == 1_700_000_003)
        let wrongKey = Self.client(transport, server: server, apiKey: "not-the-token")
        await #expect(throws: APIError.self) { try await wrongKey.users.getUser(id: "3") }
    }

    @Test(
        "headers, body and query items declared the seeds' way are sent",
        arguments: TransportKind.allCases)
    func headersBodyAndQuery(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = Self.client(transport, server: server, apiKey: "seed-token")
        let data = try await client.users.echo(note: "hello seeds")
        let echo = try JSONDecoder().decode(Echo.self, from: data)
        #expect(echo.method == "POST")
        #expect(echo.query == "note=hello%20seeds")
        #expect(echo.values(for: "X-Note") == ["hello seeds"])
        #expect(echo.values(for: "Content-Type") == ["text/plain"])
        #expect(echo.values(for: "Authorization") == ["Bearer seed-token"])
        #expect(echo.body == "hello seeds")
    }
}
