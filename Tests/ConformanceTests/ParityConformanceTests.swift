import Courier
import CourierTestSupport
import Foundation
import Testing

/// Both transports put the same request on the wire and hand back the same response.
@Suite("Transport parity")
struct ParityConformanceTests {
    /// The header fields the server saw, lowercased names, sorted: order is not semantic.
    static func received(_ request: HTTPRequest, on transport: TransportKind) async throws
        -> [String]
    {
        let echo = try Echo(try await transport.makeClient().perform(request))
        // The default Accept-Encoding is each transport's (the codings it decodes): the same on
        // Linux, where both offer gzip, deflate, br and zstd; URLSession on Darwin offers
        // Apple's. It is checked against the documented value in `defaults`.
        let defaultEncoding =
            request.headers.contains("Accept-Encoding")
            ? "" : "accept-encoding: \(transport.acceptEncoding)"
        return echo.headers.map { "\($0[0].lowercased()): \($0[1])" }
            .map { $0 == defaultEncoding ? "accept-encoding: <default>" : $0 }.sorted()
    }

    static func requests(_ server: FixtureServer) -> [(String, HTTPRequest)] {
        [
            ("plain GET", HTTPRequest(url: server.url("/echo"))),
            (
                "raw POST body without a type",
                HTTPRequest(url: server.url("/echo"), method: .post, body: Data("a=1&b=2".utf8))
            ),
            ("empty POST", HTTPRequest(url: server.url("/echo"), method: .post)),
            (
                "PUT with JSON and caller headers",
                HTTPRequest(
                    url: server.url("/echo"), method: .put,
                    headers: [
                        "Content-Type": "application/json", "User-Agent": "mine/1",
                        "Accept": "application/json", "Accept-Encoding": "identity",
                        "X-Empty": "",
                    ], body: Data(#"{"n":1}"#.utf8))
            ),
            (
                "URL with user and password",
                HTTPRequest(
                    url: URL(string: "http://bob:s%20cret@127.0.0.1:\(server.port)/echo")!)
            ),
            // URLSession sent `Content-Length: 0` with these, curl nothing (trial CC).
            ("bodiless DELETE", HTTPRequest(url: server.url("/echo"), method: .delete)),
            ("bodiless OPTIONS", HTTPRequest(url: server.url("/echo"), method: .options)),
            ("bodiless PUT", HTTPRequest(url: server.url("/echo"), method: .put)),
        ]
    }

    @Test("both transports send the same header fields")
    func sameHeaders() async throws {
        let server = try TestServers.fixture()
        for (label, request) in Self.requests(server) {
            let viaURLSession = try await Self.received(request, on: .urlSession)
            let viaCurl = try await Self.received(request, on: .curl)
            #expect(viaURLSession == viaCurl, "\(label)")
        }
    }

    @Test(
        "what is sent is exactly WireRequest's fields plus Host and Content-Length",
        arguments: TransportKind.allCases)
    func documentedHeaders(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        for (label, request) in Self.requests(server) {
            let wire = try WireRequest(request, acceptEncoding: transport.acceptEncoding)
            let defaultEncoding =
                request.headers.contains("Accept-Encoding")
                ? "" : "accept-encoding: \(transport.acceptEncoding)"
            var expected = wire.headers.map { "\($0.name.lowercased()): \($0.value)" }
                .map { $0 == defaultEncoding ? "accept-encoding: <default>" : $0 }
            expected.append("host: 127.0.0.1:\(server.port)")
            if let body = request.body {
                expected.append("content-length: \(body.count)")
            } else if request.method == .post {
                expected.append("content-length: 0")
            }
            #expect(
                try await Self.received(request, on: transport) == expected.sorted(), "\(label)")
        }
    }

    @Test("the defaults are the documented ones", arguments: TransportKind.allCases)
    func defaults(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let echo = try Echo(
            try await transport.makeClient().perform(
                HTTPRequest(url: server.url("/echo"), method: .post, body: Data("x".utf8))))
        #expect(echo.values(for: "User-Agent") == ["courier/\(CourierVersion.current)"])
        #expect(echo.values(for: "Accept") == ["*/*"])
        #expect(echo.values(for: "Accept-Encoding") == [transport.acceptEncoding])
        #expect(echo.values(for: "Accept-Language").isEmpty)
        #expect(echo.values(for: "Connection").isEmpty)
        #expect(echo.values(for: "Content-Type").isEmpty, "no form type added to a raw body")
        #expect(echo.body == "x")
    }

    @Test("URL credentials go as Basic auth, never in the URL", arguments: TransportKind.allCases)
    func userinfo(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let url = URL(string: "http://bob:s%40cret@127.0.0.1:\(server.port)/echo?q=1")!
        let response = try await transport.makeClient().perform(HTTPRequest(url: url))
        let echo = try Echo(response)
        let expected = "Basic " + Data("bob:s@cret".utf8).base64EncodedString()
        #expect(echo.values(for: "Authorization") == [expected])
        #expect(!response.url.absoluteString.contains("cret"))
    }

    @Test(
        "gzip, deflate and br bodies are decoded on both; URLSession says their end is unchecked",
        arguments: TransportKind.allCases, ["/gzip", "/deflate", "/brotli"])
    func compressedBodies(transport: TransportKind, path: String) async throws {
        // httpbin compresses these whatever the request's Accept-Encoding says.
        let base = try await TestServers.httpbin()
        for headers: HTTPHeaders in [[:], ["Accept-Encoding": "gzip, deflate"]] {
            let request = HTTPRequest(url: base.appendingPathComponent(path), headers: headers)
            let response = try await transport.makeClient().perform(request)
            #expect(response.status == 200)
            let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(object?["method"] as? String == "GET", "decoded JSON from \(path)")
            let coding = try #require(response.headers["Content-Encoding"], "the wire's headers")
            // FoundationNetworking decodes without telling whether the stream ended.
            #expect(response.bodyEndUnchecked == (transport == .curl ? nil : coding))
        }
    }

    @Test(
        "a header value with CR or LF is refused and nothing is sent",
        arguments: TransportKind.allCases)
    func headerInjection(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("inject")
        for headers: HTTPHeaders in [
            ["X-V": "x\r\nX-Injected: yes"], ["X-V": "a\nb"], ["X-V": "a\0b"], ["Bad Name": "v"],
        ] {
            await #expect {
                _ = try await transport.makeClient().perform(
                    HTTPRequest(url: server.url("/echo?key=\(key)"), headers: headers))
            } throws: { ($0 as? HTTPError)?.kind == .invalidRequest }
        }
        #expect(try await ServerHits.of(key, on: server).count == 0)
    }

    @Test("a cancelled request is recognisable as cancellation", arguments: TransportKind.allCases)
    func cancellation(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let key = FixtureServer.uniqueKey("cancel")
        // Held until the test lets it go, not 30 s: on a loaded machine (the fixture server
        // busy with a 300-request burst) the wait below outlasted 30 s once, and the request
        // was answered before it was cancelled.
        let release = FixtureServer.uniqueKey("cancel-release")
        let task = Task {
            try await client.perform(
                HTTPRequest(url: server.url("/slow?ms=0&hold_until=\(release)&key=\(key)")))
        }
        // Cancel once the request is at the server, however slow the machine (TSan) is.
        let deadline = ContinuousClock.now + .seconds(300)
        while try await ServerHits.of(key, on: server).count == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        let result = await task.result
        _ = await ProbeClient().get(server.url("/toggle/on?name=\(release)"))
        #expect(throws: HTTPError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.isCancellation)
            #expect((error as? HTTPError)?.kind == .cancelled)
        }
    }

    @Test(
        "300 requests at once: at most 64 in flight per host, all succeed",
        arguments: TransportKind.allCases)
    func defaultConnectionLimit(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let key = FixtureServer.uniqueKey("limit")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    try await client.perform(
                        HTTPRequest(url: server.url("/slow?ms=100&key=\(key)"))
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 300 && statuses.allSatisfy { $0 == 200 })
        // Measured at the server: one request per connection at a time, so requests in
        // flight are connections in use. Without a per-host cap, curl had one per request.
        let most = try await server.maxConcurrency(of: key)
        #expect(most <= 64 && most > 8, "\(most) in flight at the server")
    }

    /// Names as they went, case and all, and values as they went: URLSession spells a name its
    /// own way and joins a repeated field, and the response had said the fields went as given
    /// (trial CC; the job log's `requestHeaders` is this list).
    @Test(
        "the response names the header fields that were sent, as they went",
        arguments: TransportKind.allCases)
    func responseRecordsSentHeaders(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        var spelled: HTTPHeaders = ["X-MiXed": "v", "ETag": "e"]
        spelled.add("X-Rep", "1")
        spelled.add("X-Rep", "2")
        let requests =
            Self.requests(server) + [
                (
                    "names of any case, a repeated field",
                    HTTPRequest(url: server.url("/echo"), headers: spelled)
                )
            ]
        for (label, request) in requests {
            let response = try await transport.makeClient().perform(request)
            let seen = try Echo(response).headers.filter {
                !["host", "content-length"].contains($0[0].lowercased())
            }.map { "\($0[0]): \($0[1])" }.sorted()
            let recorded = response.requestHeaders.map { "\($0.name): \($0.value)" }
            #expect(recorded.sorted() == seen, "\(label)")
        }
    }
}
