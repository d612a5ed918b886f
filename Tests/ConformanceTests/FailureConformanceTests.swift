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

    @Test(
        "cancelling the task cancels the request", .timeLimit(.minutes(3)),
        arguments: TransportKind.allCases)
    func cancellation(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let key = FixtureServer.uniqueKey("cancel")
        // The server answers after ten minutes, far beyond the suite's time limit (a hang
        // guard): a caller that waited for the server never gets its error in time.
        // Its own timeout is longer than the wait for the server below may take on a starved
        // machine: a loaded run timed the request out (60 s) before it was cancelled.
        let task = Task {
            try await client.perform(
                HTTPRequest(url: server.url("/slow?ms=600000&key=\(key)"), timeout: 900))
        }
        // Cancelled once the server has the request, so that it is the request in flight that
        // is cancelled (up to 1,200 looks, 50 ms apart).
        for _ in 0..<1_200 where try await ServerHits.of(key, on: server).count == 0 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await ServerHits.of(key, on: server).count == 1, "the request was sent")
        task.cancel()
        let error = try await #require(throws: HTTPError.self) { try await task.value }
        #expect(error.kind == .cancelled)
    }

    /// FoundationNetworking ended a request after the session's 60 s idle time, whatever the
    /// request's own timeout: a cancellation test on a loaded machine got `.timeout` from a
    /// request given 900 s. The request's timeout is its deadline on both transports.
    @Test(
        "a server silent for over a minute is waited for until the request's own timeout",
        .timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func longSilenceWithinTheTimeout(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/slow?ms=61000"), timeout: 240))
        #expect(response.status == 200)
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
        // A marker through the same client after the error: a cancelled request the transport
        // still sent would be queued ahead of it, so once the server has the marker it has
        // everything the client sent before (no wait for a time that proves nothing).
        var marker = HTTPRequest(url: server.url("/echo?key=\(key)"))
        marker.headers["X-Marker"] = "1"
        _ = try await client.perform(marker)
        let hits = try await ServerHits.of(key, on: server).requests
        #expect(hits.map { $0.header("X-Marker") } == ["1"], "only the marker reached the server")
    }

    @Test("a non-http URL is rejected", arguments: TransportKind.allCases)
    func invalidURL(transport: TransportKind) async throws {
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(
                HTTPRequest(url: URL(string: "ftp://127.0.0.1/file")!))
        }
        #expect(error.kind == .invalidURL)
    }

    /// Foundation takes `:99999` as a port; curl refused it while URLSession tried to connect.
    @Test(
        "a port outside 1–65535 is an invalid URL on both, nothing sent",
        arguments: TransportKind.allCases)
    func portOutOfRange(transport: TransportKind) async throws {
        let client = transport.makeClient()
        for port in ["99999", "65536"] {
            let error = try await #require(throws: HTTPError.self) {
                try await client.perform(
                    HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/x")!))
            }
            #expect(error.kind == .invalidURL, "\(port): \(error)")
        }
    }
}
