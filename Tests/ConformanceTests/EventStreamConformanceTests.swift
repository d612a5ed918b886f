import Courier
import CourierTestSupport
import Foundation
import Testing

/// Server-sent events and JSON lines on both transports against the fixture's `/sse` and
/// `/ndjson`: events as they arrive, reconnection with `Last-Event-ID`, a 204 that stops it,
/// refusals with context, cancellation, and the same through `DefaultAPIClient`.
/// The suite's time limit is a hang guard (a case takes under a second on a quiet machine, and
/// 32 s was seen under load): a delay or gate a test relies on never being used lasts longer.
@Suite("Event streams", .timeLimit(.minutes(3)))
struct EventStreamConformanceTests {
    struct Tick: Decodable, Equatable {
        let n: Int
        let text: String
    }

    struct Item: Decodable, Equatable {
        let id: Int
        let name: String
    }

    /// At most `limit` events: a sequence that never ends fails the test instead of hanging it.
    static func collect(_ events: ServerSentEvents, limit: Int = 20) async throws
        -> [ServerSentEvent]
    {
        var collected: [ServerSentEvent] = []
        for try await event in events {
            collected.append(event)
            if collected.count == limit { break }
        }
        return collected
    }

    @Test("events arrive before the server has finished", arguments: TransportKind.allCases)
    func eventsBeforeTheEnd(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let gate = FixtureServer.uniqueKey("gate")
        let key = FixtureServer.uniqueKey("sse")
        let events = transport.makeClient().events(
            HTTPRequest(url: server.url("/sse?n=3&retry=50&gate=\(gate)&key=\(key)")))
        var iterator = events.makeAsyncIterator()
        // The server holds the rest until the gate opens (300 s at most, beyond the suite's
        // time limit): an event that arrives before the test opens it came before the end.
        let first = try #require(try await iterator.next())
        #expect(first.event == "tick")
        #expect(first.id == "1")
        #expect(try first.decode(Tick.self) == Tick(n: 1, text: "café 1"))
        _ = try await ProbeClient().get(server.url("/toggle/on?name=\(gate)"))
        var rest: [ServerSentEvent] = []
        while rest.count < 10, let event = try await iterator.next() { rest.append(event) }
        #expect(rest.map(\.id) == ["2", "3"])
        #expect(try rest.map { try $0.decode(Tick.self).text } == ["café 2", "café 3"])
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.requests.first?.header("Accept") == "text/event-stream")
    }

    @Test(
        "a stream that ends is opened again with Last-Event-ID, until a 204",
        arguments: TransportKind.allCases, ["", "&cut=1"])
    func reconnects(transport: TransportKind, cut: String) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("sse")
        // retry: 50 ms from the stream, instead of the 30 s default asked for here.
        let events = transport.makeClient().events(
            HTTPRequest(url: server.url("/sse?n=4&per=2&retry=50&key=\(key)\(cut)")),
            reconnect: .upTo(3, delay: .seconds(3600)))
        // The stream's 50 ms retry is used: the hour asked for here would run into the suite's
        // time limit (a hang guard, not a speed: no bound on how long the test takes).
        let collected = try await Self.collect(events)
        #expect(collected.map(\.id) == ["1", "2", "3", "4"])
        #expect(!collected.contains { $0.data.contains("never dispatched") })
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.requests.map { $0.header("Last-Event-ID") } == [nil, "2", "4"])
    }

    @Test("without reconnection the sequence ends with the body", arguments: TransportKind.allCases)
    func noReconnection(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("sse")
        let events = transport.makeClient().events(
            HTTPRequest(url: server.url("/sse?n=4&per=2&key=\(key)&cut=1")))
        var ids: [String?] = []
        await #expect(throws: HTTPError.self) {
            for try await event in events where ids.count < 10 { ids.append(event.id) }
        }
        #expect(ids == ["1", "2"])
        #expect(try await ServerHits.of(key, on: server).count == 1)
    }

    @Test("a 204 ends the sequence with no events", arguments: TransportKind.allCases)
    func noContent(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let events = transport.makeClient().events(
            HTTPRequest(url: server.url("/empty")), reconnect: .upTo(3))
        #expect(try await Self.collect(events).isEmpty)
    }

    @Test(
        "a status that is not 2xx throws with the status and the body's first bytes",
        arguments: TransportKind.allCases)
    func refusedStatus(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let events = transport.makeClient().events(
            HTTPRequest(url: server.url("/status/503")), reconnect: .upTo(3))
        await #expect {
            _ = try await Self.collect(events)
        } throws: { error in
            let error = error as? StreamError
            return error?.kind == .unacceptableStatus && error?.status == 503
                && error?.bodyPrefix == Data("status 503".utf8)
        }
    }

    @Test("another content type throws", arguments: TransportKind.allCases)
    func wrongContentType(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let events = transport.makeClient().events(HTTPRequest(url: server.url("/json?v=%7B%7D")))
        await #expect {
            _ = try await Self.collect(events)
        } throws: { error in
            let error = error as? StreamError
            return error?.kind == .unexpectedContentType && error?.bodyPrefix == Data("{}".utf8)
        }
    }

    @Test(
        "cancelling the reader stops the stream and a wait to reconnect",
        arguments: TransportKind.allCases)
    func cancellation(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        // One event a connection and no retry: after the first event the sequence waits an
        // hour, far beyond the suite's time limit, unless the cancellation ends the wait.
        let waiting = client.events(
            HTTPRequest(url: server.url("/sse?n=5&per=1")),
            reconnect: .upTo(3, delay: .seconds(3600)))
        // Events every 200 ms for 20 s: a reader the cancellation did not stop reads all 100.
        let endless = client.events(HTTPRequest(url: server.url("/sse?n=100&interval_ms=200")))
        for events in [waiting, endless] {
            let first = AsyncStream<Void>.makeStream()
            let reader = Task {
                var count = 0
                for try await _ in events {
                    count += 1
                    if count == 1 { first.continuation.yield() }
                    if count == 100 { break }
                }
                return count
            }
            for await _ in first.stream { break }
            reader.cancel()
            let result = await reader.result
            if case .success(let count) = result { #expect(count < 100) }
        }
        #expect(try await client.perform(HTTPRequest(url: server.url("/echo"))).status == 200)
    }

    @Test("JSON lines arrive before the server has finished", arguments: TransportKind.allCases)
    func linesBeforeTheEnd(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let gate = FixtureServer.uniqueKey("gate")
        let lines = transport.makeClient().lines(
            of: Item.self, HTTPRequest(url: server.url("/ndjson?n=3&gate=\(gate)")))
        var iterator = lines.makeAsyncIterator()
        // The server holds the rest until the gate opens (300 s at most): a line that arrives
        // before the test opens it came before the end.
        #expect(try await iterator.next() == Item(id: 1, name: "item é 1"))
        _ = try await ProbeClient().get(server.url("/toggle/on?name=\(gate)"))
        var rest: [Item] = []
        while rest.count < 10, let item = try await iterator.next() { rest.append(item) }
        #expect(rest.map(\.id) == [2, 3])
    }

    @Test("a JSON line that does not decode names its line", arguments: TransportKind.allCases)
    func badLine(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let lines = transport.makeClient().lines(
            of: Item.self, HTTPRequest(url: server.url("/ndjson?n=5&bad=4")))
        var ids: [Int] = []
        await #expect {
            for try await item in lines where ids.count < 10 { ids.append(item.id) }
        } throws: { ($0 as? StreamError)?.line == 4 }
        #expect(ids == [1, 2])
    }

    struct Feed: APIRequest {
        typealias Response = Data
        let path: String
        let query: [URLQueryItem]
        var queryItems: [URLQueryItem]? { query }
    }

    @Test(
        "DefaultAPIClient: events and lines with the configuration's URL, headers and auth",
        arguments: TransportKind.allCases)
    func apiClient(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("sse")
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: server.baseURL, auth: .bearer("stream-token"), headers: ["X-App": "1"]))
        let events = client.events(
            for: Feed(
                path: "/sse",
                query: [
                    URLQueryItem(name: "n", value: "4"), URLQueryItem(name: "per", value: "2"),
                    URLQueryItem(name: "retry", value: "10"), URLQueryItem(name: "key", value: key),
                ]),
            reconnect: .upTo(2))
        #expect(try await Self.collect(events).map(\.id) == ["1", "2", "3", "4"])
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.count == 3)
        for request in hits.requests {
            #expect(request.header("Authorization") == "Bearer stream-token")
            #expect(request.header("X-App") == "1")
        }
        #expect(hits.requests.map { $0.header("Last-Event-ID") } == [nil, "2", "4"])

        let lines = client.lines(
            of: Item.self, for: Feed(path: "/ndjson", query: [URLQueryItem(name: "n", value: "3")]))
        var items: [Item] = []
        for try await item in lines where items.count < 10 { items.append(item) }
        #expect(items.map(\.name) == ["item é 1", "item é 2", "item é 3"])

        await #expect {
            for try await _ in client.events(for: Feed(path: "/status/404", query: [])) {}
        } throws: { error in
            let error = error as? APIError
            return error?.kind == .unacceptableStatus && error?.status == 404
                && error?.body == Data("status 404".utf8)
        }
    }
}
