import Courier
import CourierTestSupport
import Foundation
import Testing

/// `stream(_:)` and `download(_:to:)` through each middleware: the reader gets the status,
/// headers and bytes `perform` returns for the same request, never a discarded attempt's (a
/// redirect it followed, a status it retried, a rejected token, a 304 answered from the cache).
@Suite("Streaming through middleware")
struct MiddlewareStreamingConformanceTests {
    /// What a caller sees of a response: status, the fields that describe the body, and bytes.
    struct Seen: Equatable, CustomStringConvertible {
        var status: Int
        var contentType: String?
        var body: Data

        var description: String {
            "\(status) \(contentType ?? "-") \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
    }

    static func performed(_ client: some HTTPClient, _ request: HTTPRequest) async throws -> Seen {
        let response = try await client.perform(request)
        return Seen(
            status: response.status, contentType: response.headers["Content-Type"],
            body: response.body)
    }

    static func streamed(_ client: some HTTPClient, _ request: HTTPRequest) async throws -> Seen {
        let response = try await client.stream(request)
        return Seen(
            status: response.status, contentType: response.headers["Content-Type"],
            body: try await response.body.collect())
    }

    static func downloaded(_ client: some HTTPClient, _ request: HTTPRequest) async throws
        -> Seen
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-mw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body")
        let response = try await client.download(request, to: file)
        return Seen(
            status: response.status, contentType: response.headers["Content-Type"],
            body: (try? Data(contentsOf: file)) ?? Data())
    }

    /// The three ways to read a response, each on a request of its own made by `request`
    /// (fresh keys, so that stateful routes answer each the same way).
    static func allThree(
        _ client: some HTTPClient, _ request: () -> HTTPRequest
    ) async throws -> (performed: Seen, streamed: Seen, downloaded: Seen) {
        (
            try await performed(client, request()), try await streamed(client, request()),
            try await downloaded(client, request())
        )
    }

    @Test(
        "redirects: only the final response reaches the reader (a 302 with a body, empty ones)",
        arguments: TransportKind.allCases)
    func redirects(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let withBody = try await Self.allThree(client) {
            HTTPRequest(url: server.url("/redirect?to=/json%3Fv%3D%5B1%5D&body=the-302-page"))
        }
        #expect(withBody.performed.status == 200)
        #expect(withBody.performed.body == Data("[1]".utf8))
        #expect(withBody.streamed == withBody.performed, "\(withBody.streamed)")
        #expect(withBody.downloaded == withBody.performed, "\(withBody.downloaded)")
        let chain = try await Self.allThree(client) {
            HTTPRequest(url: server.url("/chain?n=3"))
        }
        #expect(chain.performed.status == 200)
        #expect(chain.streamed == chain.performed, "\(chain.streamed)")
        #expect(chain.downloaded == chain.performed, "\(chain.downloaded)")
    }

    @Test("redirects on httpbin, a server not ours", arguments: TransportKind.allCases)
    func redirectsOnHTTPBin(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let request = HTTPRequest(url: base.appendingPathComponent("redirect/1"))
        let performed = try await Self.performed(client, request)
        let streamed = try await Self.streamed(client, request)
        #expect(performed.status == 200)
        #expect(streamed == performed, "\(streamed)")
    }

    @Test(
        "retries: the retried attempts' bodies never reach the reader; the last one's does",
        arguments: TransportKind.allCases)
    func retries(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RetryingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient()),
            policy: RetryPolicy(maxAttempts: 3, initialDelay: 0.01, jitter: false))
        let recovered = try await Self.allThree(client) {
            HTTPRequest(url: server.url("/flaky?key=\(FixtureServer.uniqueKey("mw"))&fail=1"))
        }
        #expect(recovered.performed.status == 200)
        #expect(recovered.performed.body == Data(#"{"attempt": 2, "ok": true}"#.utf8))
        #expect(recovered.streamed == recovered.performed, "\(recovered.streamed)")
        #expect(recovered.downloaded == recovered.performed, "\(recovered.downloaded)")
        // Every attempt refused: the last one is the answer, with its own body only.
        let exhausted = try await Self.allThree(client) {
            HTTPRequest(url: server.url("/flaky?key=\(FixtureServer.uniqueKey("mw"))&fail=9"))
        }
        #expect(exhausted.performed.status == 503)
        #expect(exhausted.performed.body == Data(#"{"attempt": 3, "ok": false}"#.utf8))
        #expect(exhausted.streamed == exhausted.performed, "\(exhausted.streamed)")
        // download(_:to:) replaces its file only with a whole 2xx body.
        #expect(exhausted.downloaded.status == 503)
        #expect(exhausted.downloaded.body.isEmpty, "\(exhausted.downloaded)")
    }

    @Test(
        "a rejected token: the 401's body never reaches the reader; the resend's does",
        arguments: TransportKind.allCases)
    func tokenRefresh(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let make = {
            AuthenticatingHTTPClient(
                wrapping: AnyHTTPClient(transport.makeClient()), provider: SeedTokens())
        }
        // A new provider each time, so that each read starts with the stale token.
        let request = HTTPRequest(url: server.url("/v1/users/1"))
        let performed = try await Self.performed(make(), request)
        let streamed = try await Self.streamed(make(), request)
        let downloaded = try await Self.downloaded(make(), request)
        #expect(performed.status == 200)
        #expect(streamed == performed, "\(streamed)")
        #expect(downloaded == performed, "\(downloaded)")
    }

    @Test(
        "cookies set on a redirect go with the next hop, streamed as performed",
        arguments: TransportKind.allCases)
    func cookies(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(
            wrapping: CookieStoringHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())))
        let seen = try await Self.allThree(client) {
            HTTPRequest(url: server.url("/set-cookie?c=flavour%3Doat&to=/echo"))
        }
        #expect(seen.performed.status == 200)
        #expect(String(decoding: seen.performed.body, as: UTF8.self).contains("flavour=oat"))
        // /echo reports the client's port, which differs per connection: compare the fields.
        func fields(_ seen: Seen) throws -> [[String]] {
            let object = try JSONSerialization.jsonObject(with: seen.body) as? [String: Any]
            // Sorted: FoundationNetworking sends fields in a dictionary's order.
            return (object?["headers"] as? [[String]] ?? []).sorted {
                $0.description < $1.description
            }
        }
        #expect(try fields(seen.performed).contains(["Cookie", "flavour=oat"]))
        #expect(seen.streamed.status == 200)
        let (performed, streamed, downloaded) = (
            try fields(seen.performed), try fields(seen.streamed),
            try fields(seen.downloaded)
        )
        #expect(streamed == performed, "\(streamed) vs \(performed)")
        #expect(downloaded == performed, "\(downloaded)")
    }

    @Test(
        "the cache: a stored body answers a streamed read; a 304 never reaches the reader",
        arguments: TransportKind.allCases)
    func cache(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = CachingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient()))
        let key = FixtureServer.uniqueKey("mw")
        // no-cache: stored, then revalidated on every read (a 304 each time).
        let request = HTTPRequest(url: server.url("/etag?v=7&cache=no-cache&key=\(key)"))
        let first = try await Self.performed(client, request)
        #expect(first.status == 200)
        let again = try await Self.performed(client, request)
        let streamed = try await Self.streamed(client, request)
        #expect(again == first)
        #expect(streamed == first, "\(streamed)")
        // Fresh for a minute: answered from the store without a request.
        let fresh = HTTPRequest(url: server.url("/etag?v=8&cache=max-age%3D60&key=\(key)"))
        let stored = try await Self.performed(client, fresh)
        let streamedFresh = try await Self.streamed(client, fresh)
        #expect(streamedFresh == stored, "\(streamedFresh)")
    }

    @Test(
        "host throttle: a 429's Retry-After holds a stream and a download to that host, which then get their answers",
        arguments: TransportKind.allCases)
    func hostThrottle(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = HostThrottlingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient()),
            hosts: HostThrottles(settings: HostThrottle.Settings(ceiling: 20)), maxDelay: 10)
        let key = FixtureServer.uniqueKey("mw")
        let refused = try await Self.performed(
            client, HTTPRequest(url: server.url("/retry-after?key=\(key)&times=1&seconds=1")))
        #expect(refused.status == 429)
        let streamed = try await Self.streamed(
            client, HTTPRequest(url: server.url("/json?v=%5B1%5D&key=\(key)")))
        #expect(streamed.status == 200 && streamed.body == Data("[1]".utf8), "\(streamed)")
        let downloaded = try await Self.downloaded(
            client, HTTPRequest(url: server.url("/json?v=%5B2%5D&key=\(key)")))
        #expect(downloaded.status == 200 && downloaded.body == Data("[2]".utf8), "\(downloaded)")
        // Measured at the server: the stream came only once the second had passed.
        let arrivals = try await ServerHits.of(key, on: server).requests.map(\.time)
        #expect(arrivals.count == 3)
        if arrivals.count == 3 {
            #expect(arrivals[1] - arrivals[0] >= 0.9, "\(arrivals.map { $0 - arrivals[0] })")
        }
    }

    @Test(
        "the whole stack at once: cache, token, retry, redirect, cookies",
        arguments: TransportKind.allCases)
    func wholeStack(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let make = {
            CachingHTTPClient(
                wrapping: AuthenticatingHTTPClient(
                    wrapping: RetryingHTTPClient(
                        wrapping: RedirectingHTTPClient(
                            wrapping: CookieStoringHTTPClient(
                                wrapping: AnyHTTPClient(transport.makeClient()))),
                        policy: RetryPolicy(maxAttempts: 3, initialDelay: 0.01, jitter: false)),
                    provider: SeedTokens()))
        }
        // A redirect with a body, to the token-guarded route: 302, then 401, then 200.
        let request = HTTPRequest(
            url: server.url("/redirect?to=/v1/users/1&status=307&body=moved"))
        let performed = try await Self.performed(make(), request)
        let streamed = try await Self.streamed(make(), request)
        let downloaded = try await Self.downloaded(make(), request)
        #expect(performed.status == 200, "\(performed)")
        #expect(streamed == performed, "\(streamed)")
        #expect(downloaded == performed, "\(downloaded)")
    }
}
