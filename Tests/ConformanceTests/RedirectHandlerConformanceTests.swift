import Courier
import CourierTestSupport
import Foundation
import Testing

/// `RedirectingHTTPClient`'s handler: it sees each hop and follows it, changes the next request
/// or stops there; performed or streamed, on both transports.
@Suite("Redirect handler")
struct RedirectHandlerConformanceTests {
    @Test("the handler sees every hop, in order", arguments: TransportKind.allCases)
    func seesEveryHop(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let seen = Locked<[String]>([])
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            redirect, next in
            seen.withLock { $0.append("\(redirect.status) \(next.url.query ?? "")") }
            return next
        }
        let response = try await client.perform(HTTPRequest(url: server.url("/chain?n=3")))
        #expect(response.status == 200)
        #expect(response.redirectCount == 3)
        #expect(seen.withLock { $0 } == ["302 n=2", "302 n=1", "302 n=0"])
    }

    @Test(
        "stopping at a redirect returns it whole, performed or streamed",
        arguments: TransportKind.allCases)
    func stops(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            _, next in next.url.path == "/echo" ? nil : next
        }
        let request = HTTPRequest(url: server.url("/redirect?to=/echo&body=not-followed"))
        let performed = try await client.perform(request)
        #expect(performed.status == 302)
        #expect(performed.body == Data("not-followed".utf8))
        #expect(performed.redirectCount == 0)
        let streamed = try await client.stream(request)
        #expect(streamed.status == 302)
        #expect(try await streamed.body.collect() == Data("not-followed".utf8))
        // A hop before the stop is followed: the stop is at the second redirect.
        let twice = HTTPRequest(
            url: server.url("/redirect?to=%2Fredirect%3Fto%3D%2Fecho%26body%3Dsecond&body=first"))
        let streamedTwice = try await client.stream(twice)
        #expect(streamedTwice.status == 302)
        #expect(try await streamedTwice.body.collect() == Data("second".utf8))
        let performedTwice = try await client.perform(twice)
        #expect(performedTwice.body == Data("second".utf8))
        #expect(performedTwice.redirectCount == 1)
    }

    @Test("the handler can change the next request", arguments: TransportKind.allCases)
    func changes(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            redirect, next in
            var next = next
            next.headers.replaceOrAdd("X-Hop-From", String(redirect.status))
            return next
        }
        let request = HTTPRequest(url: server.url("/redirect?to=/echo&status=307"))
        for body in [
            try await client.perform(request).body,
            try await client.stream(request).body.collect(),
        ] {
            let echo = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            let headers = echo?["headers"] as? [[String]] ?? []
            #expect(headers.first { $0.first?.lowercased() == "x-hop-from" }?.last == "307")
        }
    }

    /// The first hop of `/redirect?to=/echo`, moved by a handler to `target`; every later hop
    /// is followed as the rules make it.
    static func movingTheFirstHop(
        to target: URL, over transport: TransportKind, setting headers: HTTPHeaders = [:]
    ) -> RedirectingHTTPClient<AnyHTTPClient> {
        RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) { _, next in
            // The first proposal is `/echo` with no query; later hops have one.
            guard next.url.path == "/echo", next.url.query == nil else { return next }
            var moved = next
            moved.url = target
            for field in headers { moved.headers.replaceOrAdd(field.name, field.value) }
            return moved
        }
    }

    @Test(
        "a relative Location after the handler's change resolves against the handler's URL",
        arguments: TransportKind.allCases)
    func relativeLocationAfterAChange(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        for streamed in [false, true] {
            let key = FixtureServer.uniqueKey("handler-moved")
            // The other origin answers with a relative Location: the hop after goes there too.
            let moved = server.otherHostURL(
                "/redirect?key=\(key)&to=\(URLBuilder.percentEncode("/echo?key=\(key)"))")
            let client = Self.movingTheFirstHop(to: moved, over: transport)
            let request = HTTPRequest(url: server.url("/redirect?to=/echo"))
            if streamed {
                // A streamed response's `url` is the one requested: the server says where the
                // hops went.
                let response = try await client.stream(request)
                #expect(response.status == 200)
                let echo = try JSONDecoder().decode(
                    Echo.self, from: try await response.body.collect())
                #expect(echo.query == "key=\(key)")
            } else {
                let response = try await client.perform(request)
                #expect(response.status == 200)
                #expect(response.redirectCount == 2)
                #expect(response.url == server.otherHostURL("/echo?key=\(key)"))
            }
            let hits = try await ServerHits.of(key, on: server)
            #expect(hits.count == 2)
            #expect(hits.requests.first?.path.hasPrefix("/redirect?key=") == true)
            #expect(hits.requests.last?.path == "/echo?key=\(key)")
            for hit in hits.requests {
                #expect(
                    hit.header("Host") == "localhost:\(server.otherPort)",
                    "streamed: \(streamed), \(hit.path) went to \(hit.header("Host") ?? "")")
            }
        }
    }

    @Test(
        "a handler's URL sent before is a loop, caught before it is sent again",
        arguments: TransportKind.allCases)
    func handlerLoopIsCaught(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("handler-loop")
        // `d/` is relative: against the proposal's URL instead of the URL sent, each hop
        // would name a new one (/d/, /d/d/, …) and no loop would be seen.
        let start = server.url("/redirect?key=\(key)&to=d/")
        let client = RedirectingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient()), maxHops: 5
        ) { _, next in
            var next = next
            next.url = start
            return next
        }
        let error = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: start))
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(error.status == 302, "the answer that was not followed")
        #expect(error.message.contains("loop"), "\(error)")
        #expect(try await ServerHits.of(key, on: server).count == 1)
    }

    @Test("a handler that leads out of a loop is followed", arguments: TransportKind.allCases)
    func handlerLeavesALoop(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("handler-unloop")
        let exit = server.url("/echo?key=\(key)")
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            _, next in
            guard next.url.path == "/loop" else { return next }
            var next = next
            next.url = exit
            return next
        }
        let request = HTTPRequest(url: server.url("/loop"))
        let performed = try await client.perform(request)
        #expect(performed.status == 200)
        #expect(performed.redirectCount == 1)
        #expect(performed.url == exit)
        let streamed = try await client.stream(request)
        #expect(streamed.status == 200)
        _ = try await streamed.body.collect()
        #expect(try await ServerHits.of(key, on: server).count == 2)
    }

    static let credentials: HTTPHeaders = [
        "Authorization": "Bearer secret-token", "Cookie": "session=secret",
        "X-Api-Key": "secret-key", "X-Keep": "kept",
    ]

    @Test(
        "a hop the handler moves to another origin goes there without credentials, and they stay dropped",
        arguments: TransportKind.allCases)
    func handlerMoveToAnotherOriginDropsCredentials(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        for streamed in [false, true] {
            let key = FixtureServer.uniqueKey("handler-away")
            // The proposal is on the request's origin, with its credentials; the handler sends
            // it to the other origin, which redirects back.
            let back = server.url("/echo?key=\(key)").absoluteString
            let away = server.otherHostURL(
                "/redirect?key=\(key)&to=\(URLBuilder.percentEncode(back))")
            let client = Self.movingTheFirstHop(to: away, over: transport)
            let request = HTTPRequest(
                url: server.url("/redirect?to=/echo"), headers: Self.credentials,
                secretHeaderNames: ["X-Api-Key"])
            if streamed {
                let response = try await client.stream(request)
                #expect(response.status == 200)
                _ = try await response.body.collect()
            } else {
                let response = try await client.perform(request)
                #expect(response.status == 200)
                #expect(response.redirectCount == 2)
            }
            let hits = try await ServerHits.of(key, on: server).requests
            #expect(
                hits.map { $0.header("Host") }
                    == ["localhost:\(server.otherPort)", "127.0.0.1:\(server.port)"])
            for hit in hits {
                let label = "streamed: \(streamed), \(hit.header("Host") ?? "")"
                #expect(hit.header("Authorization") == nil, "\(label)")
                #expect(hit.header("Cookie") == nil, "\(label)")
                #expect(hit.header("X-Api-Key") == nil, "\(label)")
                #expect(hit.header("X-Keep") == "kept", "\(label)")
            }
        }
    }

    @Test(
        "a credential the handler sets itself for another origin is sent",
        arguments: TransportKind.allCases)
    func handlerOwnCredentialForAnotherOrigin(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("handler-own")
        let client = Self.movingTheFirstHop(
            to: server.otherHostURL("/echo?key=\(key)"), over: transport,
            setting: ["Authorization": "Bearer for-the-other-origin"])
        let request = HTTPRequest(
            url: server.url("/redirect?to=/echo"), headers: Self.credentials,
            secretHeaderNames: ["X-Api-Key"])
        #expect(try await client.perform(request).status == 200)
        let hit = try #require(try await ServerHits.of(key, on: server).requests.first)
        #expect(hit.header("Authorization") == "Bearer for-the-other-origin")
        #expect(hit.header("Cookie") == nil)
        #expect(hit.header("X-Api-Key") == nil)
    }

    @Test(
        "a cross-origin hop the handler sends back to the request's origin keeps its credentials",
        arguments: TransportKind.allCases)
    func handlerBackToTheOriginKeepsCredentials(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("handler-back")
        let elsewhere = server.otherHostURL("/echo").absoluteString
        let home = server.url("/echo?key=\(key)")
        // The proposal is on the other origin, without credentials; the handler keeps the
        // chain on the request's origin, so nothing changes origin and nothing is dropped.
        let client = RedirectingHTTPClient(wrapping: AnyHTTPClient(transport.makeClient())) {
            _, next in
            guard next.url.host == "localhost" else { return next }
            var next = next
            next.url = home
            return next
        }
        let request = HTTPRequest(
            url: server.url("/redirect?to=\(URLBuilder.percentEncode(elsewhere))"),
            headers: Self.credentials, secretHeaderNames: ["X-Api-Key"])
        let performed = try await client.perform(request)
        #expect(performed.status == 200)
        #expect(performed.url == home)
        let streamed = try await client.stream(request)
        #expect(streamed.status == 200)
        _ = try await streamed.body.collect()
        let hits = try await ServerHits.of(key, on: server).requests
        #expect(hits.count == 2)
        for hit in hits {
            #expect(hit.header("Host") == "127.0.0.1:\(server.port)")
            #expect(hit.header("Authorization") == "Bearer secret-token")
            #expect(hit.header("Cookie") == "session=secret")
            #expect(hit.header("X-Api-Key") == "secret-key")
            #expect(hit.header("X-Keep") == "kept")
        }
    }
}
