import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Example service over httpbin")
struct ExampleServiceTests {
    @Test("query, headers and decoding", arguments: TransportKind.allCases)
    func echo(transport: TransportKind) async throws {
        let service = HTTPBinService.make(
            baseURL: try await TestServers.httpbin(), transport: transport.makeClient())
        let echo = try await service.echo(["q": "a b&c", "lang": "Zürich"])
        #expect(echo.args == ["q": "a b&c", "lang": "Zürich"])
        #expect(echo.headers["Accept"] == "application/json")
        #expect(try await service.userAgent() == "courier-example/1")
    }

    @Test("basic auth accepted and refused", arguments: TransportKind.allCases)
    func basicAuth(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let good = HTTPBinService.make(
            baseURL: base, transport: transport.makeClient(),
            auth: .basic(user: "ada", password: "pw"))
        #expect(try await good.isAuthenticated(user: "ada", password: "pw"))
        let bad = HTTPBinService.make(
            baseURL: base, transport: transport.makeClient(),
            auth: .basic(user: "ada", password: "no"))
        let error = try await #require(throws: APIError.self) {
            try await bad.isAuthenticated(user: "ada", password: "pw")
        }
        #expect(error.status == 401)
    }

    @Test("a JSON body round-trips", arguments: TransportKind.allCases)
    func postJSON(transport: TransportKind) async throws {
        let service = HTTPBinService.make(
            baseURL: try await TestServers.httpbin(), transport: transport.makeClient())
        let note = NewNote(title: "hello", body: "ünïcode ☕")
        #expect(try await service.post(note) == note)
    }
}
