import Courier
import CourierTestSupport
import Foundation
import Testing

/// Replies that are not HTTP responses fail alike on both transports: a malformed status line
/// or an HTTP/0.9 reply as `.badResponse` (retried like a network failure, where it was logged
/// `invalidURL` and never retried), a Content-Length that frames nothing as `.network`.
@Suite("Malformed replies")
struct MalformedReplyConformanceTests {
    static func cases(_ paths: [String]) -> [(TransportKind, String)] {
        TransportKind.allCases.flatMap { transport in paths.map { (transport, $0) } }
    }

    @Test(
        "a malformed status line or an HTTP/0.9 reply is a bad response",
        arguments: cases([
            "/malformed/status-short", "/malformed/status-long", "/malformed/status-letters",
            "/malformed/http09",
        ]))
    func malformedStatus(transport: TransportKind, path: String) async throws {
        let server = try TestServers.fixture()
        let error = try await #require(throws: HTTPError.self, "\(path)") {
            try await transport.makeClient().perform(HTTPRequest(url: server.url(path)))
        }
        #expect(error.kind == .badResponse, "\(path): \(error)")
        #expect(!RetryPolicy.permanentFailures.contains(error.kind), "retried like network")
    }

    @Test(
        "differing Content-Length fields, or letters in one, frame nothing",
        arguments: cases(["/malformed/dup-length", "/malformed/length-letters"]))
    func contentLengthThatFramesNothing(transport: TransportKind, path: String) async throws {
        let server = try TestServers.fixture()
        let error = try await #require(throws: HTTPError.self, "\(path)") {
            try await transport.makeClient().perform(HTTPRequest(url: server.url(path)))
        }
        #expect(error.kind == .network, "\(path): \(error)")
        #expect(error.message.contains("is not a number that fits"), "\(error.message)")
    }

    /// `HTTP/1.1 200` with no reason phrase: curl reads it; FoundationNetworking's own status
    /// line parser refuses it ("Failed writing header") and nothing in a client can change
    /// that, so the transports differ here (docs/transports.md).
    @Test("a status line without a reason phrase", arguments: TransportKind.allCases)
    func noReasonPhrase(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let request = HTTPRequest(url: server.url("/malformed/no-reason"))
        switch transport {
        case .curl:
            let response = try await transport.makeClient().perform(request)
            #expect(response.status == 200)
            #expect(response.body == Data(#"{"ok": true}"#.utf8))
        case .urlSession:
            let error = try await #require(throws: HTTPError.self) {
                try await transport.makeClient().perform(request)
            }
            #expect(error.kind == .network)
        }
    }

    /// A chunked body with a trailer field is well-formed and curl reads it. FoundationNetworking
    /// takes the trailer for a new response's header and traps ("Transfer completed, but
    /// there's no response."), ending the process: no client code can catch it, so the case
    /// runs on curl only (docs/transports.md; `courier run` on URLSession says so on a terminal).
    @Test("a chunked body with a trailer is read whole (curl)")
    func trailer() async throws {
        let server = try TestServers.fixture()
        let response = try await TransportKind.curl.makeClient().perform(
            HTTPRequest(url: server.url("/malformed/trailer")))
        #expect(response.status == 200)
        #expect(response.body == Data(#"{"ok": true}"#.utf8))
    }
}
