import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Transport failures")
struct FailureConformanceTests {
    @Test("a slow server times out", arguments: TransportKind.allCases)
    func timeout(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let request = HTTPRequest(url: server.url("/slow?ms=20000"), timeout: 0.5)
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(request)
        }
        #expect(error.kind == .timeout)
        #expect(error.url == request.url)
    }

    @Test("a closed port is a connect error", arguments: TransportKind.allCases)
    func connectionRefused(transport: TransportKind) async throws {
        let url = URL(string: "http://127.0.0.1:\(unusedLoopbackPort())/")!
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: url))
        }
        #expect(error.kind == .connect)
    }

    @Test("a dropped connection is a network error", arguments: TransportKind.allCases)
    func droppedConnection(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: server.url("/drop")))
        }
        #expect(error.kind == .network)
    }

    @Test("a body shorter than its Content-Length fails", arguments: TransportKind.allCases)
    func truncatedBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: server.url("/truncated")))
        }
        #expect(error.kind == .network)
    }

    @Test(
        "a body over the cap fails, announced or not",
        arguments: TransportKind.allCases, ["/bytes?n=2097152", "/bytes?n=2097152&chunked=1"])
    func sizeCap(transport: TransportKind, path: String) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient(maxResponseBytes: 1 << 20)
        let error = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.url(path)))
        }
        #expect(error.kind == .bodyTooLarge)
        let fits = try await client.perform(HTTPRequest(url: server.url("/bytes?n=1048576")))
        #expect(fits.body.count == 1 << 20, "a body exactly at the cap is accepted")
    }

    @Test("cancelling the task cancels the request", arguments: TransportKind.allCases)
    func cancellation(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        // The server answers after 60 s; the bound is far below that and far above the
        // 18 s a TSan run's starved cooperative pool once took to resume the task.
        let task = Task {
            try await client.perform(HTTPRequest(url: server.url("/slow?ms=60000")))
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        let started = ContinuousClock.now
        let error = try await #require(throws: HTTPError.self) { try await task.value }
        #expect(error.kind == .cancelled)
        #expect(started.duration(to: .now) < .seconds(40), "it did not wait for the server")
    }

    @Test("an untrusted certificate is a TLS error", arguments: TransportKind.allCases)
    func untrustedCertificate(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        try #require(server.tlsPort != 0, "the fixture server needs openssl for its TLS port")
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: server.tlsURL("/echo")))
        }
        #expect(error.kind == .tls, "\(error)")
    }

    @Test(
        "a request from an already-cancelled task is never sent", arguments: TransportKind.allCases)
    func alreadyCancelled(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("precancel")
        let client = transport.makeClient()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.perform(HTTPRequest(url: server.url("/echo?key=\(key)")))
        }
        let error = try await #require(throws: HTTPError.self) { try await task.value }
        #expect(error.kind == .cancelled)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await ServerHits.of(key, on: server).count == 0)
    }

    @Test("a non-http URL is rejected", arguments: TransportKind.allCases)
    func invalidURL(transport: TransportKind) async throws {
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(
                HTTPRequest(url: URL(string: "ftp://127.0.0.1/file")!))
        }
        #expect(error.kind == .invalidURL)
    }
}
