import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("APIClient over each transport")
struct APIClientConformanceTests {
    func client(_ transport: TransportKind, auth: Authentication? = nil) throws -> DefaultAPIClient
    {
        DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(baseURL: try TestServers.fixture().baseURL, auth: auth))
    }

    struct EchoBody: Decodable, Sendable {
        let method: String
        let headers: [[String]]
        let body: String
    }

    @Test("auth, headers and JSON body reach the server", arguments: TransportKind.allCases)
    func authAndBody(transport: TransportKind) async throws {
        struct Payload: Encodable, Sendable { let n: Int }
        let echo: EchoBody = try await client(transport, auth: .bearer("t0k"))
            .perform(.post("/echo", json: Payload(n: 7), headers: ["X-Trace": "1"]))
        #expect(echo.method == "POST")
        #expect(echo.body == #"{"n":7}"#)
        #expect(echo.headers.contains(["Authorization", "Bearer t0k"]))
        #expect(echo.headers.contains(["X-Trace", "1"]))
    }

    @Test("a 422 becomes an APIError with the server's body", arguments: TransportKind.allCases)
    func errorBody(transport: TransportKind) async throws {
        struct Problem: Decodable { let detail: String }
        let error = try await #require(throws: APIError.self) {
            let _: EmptyResponse = try await client(transport).perform(.get("/error-json"))
        }
        #expect(error.status == 422)
        #expect(try error.decodeBody(as: Problem.self).detail == "name is required")
        // The server's word is in the message (trial VVV: "unacceptable status 403" alone).
        #expect(error.description.contains("(first bytes: "), "\(error)")
        #expect(error.description.contains("name is required"), "\(error)")
    }

    @Test("204 decodes as EmptyResponse", arguments: TransportKind.allCases)
    func noContent(transport: TransportKind) async throws {
        let _: EmptyResponse = try await client(transport).perform(.delete("/empty"))
    }

    @Test(
        "redirects are followed and a cross-host hop drops the token",
        arguments: TransportKind.allCases)
    func crossHostRedirect(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let target = URLBuilder.percentEncode(server.otherHostURL("/echo").absoluteString)
        let response = try await client(transport, auth: .bearer("t0k"))
            .send(Request<EchoBody>.get("/redirect?to=\(target)"))
        #expect(response.response.url.host == "localhost")
        #expect(!response.value.headers.contains { $0[0].lowercased() == "authorization" })
    }

    /// Trial VVV: secret headers of the configuration (`Authorization`, `X-Api-Key`,
    /// `Cookie`) went to another origin when a request's path was an absolute URL there,
    /// though `auth` does not, and a redirect there drops them.
    @Test(
        "the configuration's secret headers stay on the base URL's origin",
        arguments: TransportKind.allCases)
    func configurationSecretsStayHome(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: server.baseURL,
                headers: [
                    "Authorization": "Bearer t0k", "X-Api-Key": "k3y", "Cookie": "sid=s1d",
                    "X-Trace": "plain",
                ]))
        let elsewhere: EchoBody = try await client.perform(
            .get(server.otherHostURL("/echo").absoluteString))
        let names = Set(elsewhere.headers.map { $0[0].lowercased() })
        #expect(names.isDisjoint(with: ["authorization", "x-api-key", "cookie"]), "\(names)")
        #expect(elsewhere.headers.contains(["X-Trace", "plain"]))
        let home: EchoBody = try await client.perform(.get("/echo"))
        #expect(home.headers.contains(["Authorization", "Bearer t0k"]))
        #expect(home.headers.contains(["X-Api-Key", "k3y"]))
    }

    @Test("redirects can be turned off", arguments: TransportKind.allCases)
    func redirectsOff(transport: TransportKind) async throws {
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: try TestServers.fixture().baseURL, maxRedirects: nil))
        let error = try await #require(throws: APIError.self) {
            let _: EmptyResponse = try await client.perform(.get("/status/302"))
        }
        #expect(error.status == 302)
    }
}
