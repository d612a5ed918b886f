import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Methods and bodies")
struct MethodConformanceTests {
    @Test(
        "every method reaches the server with its body",
        arguments: TransportKind.allCases,
        [HTTPMethod.post, .put, .patch, .delete, "PURGE"])
    func methodWithBody(transport: TransportKind, method: HTTPMethod) async throws {
        let server = try TestServers.fixture()
        let body = Data(#"{"name":"courier","n":1}"#.utf8)
        let request = HTTPRequest(
            url: server.url("/echo"), method: method,
            headers: ["Content-Type": "application/json"], body: body)
        let response = try await transport.makeClient().perform(request)
        let echo = try Echo(response)
        #expect(response.status == 200)
        #expect(echo.method == method.rawValue)
        #expect(echo.body == String(decoding: body, as: UTF8.self))
        #expect(echo.values(for: "Content-Type") == ["application/json"])
    }

    @Test(
        "every method works without a body",
        arguments: TransportKind.allCases, [HTTPMethod.get, .delete, .options, .post])
    func methodWithoutBody(transport: TransportKind, method: HTTPMethod) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/echo?a=1"), method: method))
        let echo = try Echo(response)
        #expect(echo.method == method.rawValue)
        #expect(echo.query == "a=1")
        #expect(echo.bodyLength == 0)
    }

    @Test("HEAD returns headers and no body", arguments: TransportKind.allCases)
    func head(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/bytes?n=5000"), method: .head))
        #expect(response.status == 200)
        #expect(response.headers["content-length"] == "5000")
        #expect(response.body.isEmpty)
    }

    @Test("request headers arrive, repeated ones too", arguments: TransportKind.allCases)
    func requestHeaders(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        var headers: HTTPHeaders = ["X-One": "1"]
        headers.add("X-Two", "a")
        headers.add("X-Two", "b")
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/echo"), headers: headers))
        let echo = try Echo(response)
        #expect(echo.values(for: "x-one") == ["1"])
        // A transport may send repeated fields as one comma-joined field (RFC 9110 5.3).
        let values = echo.values(for: "x-two").flatMap { $0.split(separator: ",") }
        #expect(values.map { $0.trimmingCharacters(in: .whitespaces) } == ["a", "b"])
    }
}
