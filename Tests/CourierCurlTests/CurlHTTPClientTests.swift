import Courier
@testable import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// What only the libcurl transport promises, beyond the shared conformance suite.
@Suite("CurlHTTPClient")
struct CurlHTTPClientTests {
    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient()
        var ports = Set<Int>()
        for _ in 0..<5 {
            ports.insert(
                try Echo(try await client.perform(HTTPRequest(url: server.url("/echo")))).peerPort)
        }
        #expect(ports.count == 1, "one keep-alive connection, got ports \(ports)")
    }

    @Test func eachRequestSendsItsOwnHeadersThroughOneReusedHandle() async throws {
        // The handle keeps the last request's header list while the fields stay the same: a
        // change, in a value, a name, the number of fields or a body, must never send the
        // previous request's fields.
        let server = try TestServers.fixture()
        let client = CurlHTTPClient()
        let cases: [(HTTPHeaders, Data?)] = [
            (["X-A": "1"], nil), (["X-A": "1"], nil), (["X-A": "2"], nil), (["X-B": "2"], nil),
            ([:], nil), (["X-A": "1", "X-B": "2"], nil), (["X-A": "1"], Data("{}".utf8)),
            (["X-A": ""], nil), (["X-A": "1"], nil),
        ]
        for (headers, body) in cases {
            let echo = try Echo(
                try await client.perform(
                    HTTPRequest(
                        url: server.url("/echo"), method: body == nil ? .get : .post,
                        headers: headers, body: body)))
            let sent = echo.headers.filter { $0[0].hasPrefix("X-") }.map { "\($0[0])=\($0[1])" }
            #expect(sent == headers.map { "\($0.name)=\($0.value)" }, "\(headers)")
            #expect(echo.values(for: "Content-Type").isEmpty, "no form Content-Type from curl")
            #expect(echo.bodyLength == (body?.count ?? 0))
        }
        #expect(client.statistics.liveHandles == 1, "one handle served every request")
    }

    @Test func aPlainGetAfterAnyOtherRequestCarriesNothingOfIt() async throws {
        // A plain GET after a plain GET of the same settings skips the handle's reset: every
        // other shape before it (a method, a body, a HEAD, a deadline, TLS checks off) must
        // still leave the handle as a GET of its own would find it.
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(maxIdleHandles: 1, eventLoops: 1))
        let get = HTTPRequest(url: server.url("/echo?n=1"))
        let others: [(String, HTTPRequest)] = [
            ("POST", HTTPRequest(url: server.url("/echo"), method: .post, body: Data("x=1".utf8))),
            ("HEAD", HTTPRequest(url: server.url("/echo"), method: .head)),
            ("DELETE", HTTPRequest(url: server.url("/echo"), method: .delete)),
            ("PUT", HTTPRequest(url: server.url("/echo"), method: .put, body: Data("{}".utf8))),
            ("short deadline", HTTPRequest(url: server.url("/echo"), timeout: 0.5)),
            ("TLS checks off", HTTPRequest(url: server.url("/echo"), validatesTLS: false)),
        ]
        for (label, other) in others {
            _ = try await client.perform(get)
            _ = try await client.perform(get)
            _ = try await client.perform(other)
            let echo = try Echo(try await client.perform(get))
            #expect(echo.method == "GET", "after \(label)")
            #expect(echo.query == "n=1", "after \(label)")
            #expect(echo.bodyLength == 0 && echo.values(for: "Content-Length").isEmpty, "\(label)")
            #expect(echo.values(for: "Expect").isEmpty, "after \(label)")
            // The deadline is the GET's own again: a 0.5 s one would cut this 1 s answer.
            let slow = try await client.perform(HTTPRequest(url: server.url("/slow?ms=1000")))
            #expect(slow.status == 200, "after \(label)")
        }
        #expect(client.statistics.liveHandles == 1, "one handle served every request")
    }

    @Test func aRequestDroppedOnKeptAliveConnectionsIsSentTwiceAtMost() async throws {
        // libcurl resends a request whose kept-alive connection closed unanswered, up to five
        // times, each on another kept-alive connection: a server that drops this request
        // would see it six times and lose six connections for one attempt. Twelve kept-alive
        // connections first, so every resend could find one (each held a second: on a loaded
        // machine, 300 ms did not always overlap all twelve).
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 12, eventLoops: 1))
        let warm = FixtureServer.uniqueKey("warm")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    _ = try await client.perform(
                        HTTPRequest(url: server.url("/slow?ms=1000&key=\(warm)")))
                }
            }
            try await group.waitForAll()
        }
        #expect(try await server.maxConcurrency(of: warm) == 12, "twelve connections kept")
        let key = FixtureServer.uniqueKey("dropped")
        let error = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.url("/drop?key=\(key)")))
        }
        #expect(error.kind == .network, "\(error)")
        let hits = try await ServerHits.of(key, on: server)
        #expect(hits.count == 2, "sent \(hits.count) times")
        #expect(
            Set(hits.requests.map(\.peerPort)).count == 2, "each on a kept-alive connection")
        #expect(error.message.contains("not sent a third time"), "\(error)")
    }

    @Test func timingsAreMeasuredByCurl() async throws {
        let server = try TestServers.fixture()
        let response = try await CurlHTTPClient().perform(
            HTTPRequest(url: server.url("/slow?ms=50")))
        let timings = response.timings
        let firstByte = try #require(timings.firstByte)
        let connect = try #require(timings.connect)
        #expect(connect <= firstByte)
        #expect(firstByte >= 0.05, "the server waited 50 ms before answering")
        #expect(firstByte <= timings.total)
        #expect(timings.tls == nil, "plain http has no TLS phase")
    }

    @Test func tlsValidationCanBeTurnedOffPerRequest() async throws {
        let server = try TestServers.fixture()
        try #require(server.tlsPort != 0, "the fixture server needs openssl for its TLS port")
        let client = CurlHTTPClient()
        let response = try await client.perform(
            HTTPRequest(url: server.tlsURL("/echo"), validatesTLS: false))
        #expect(response.status == 200)
        #expect(response.timings.tls != nil, "the TLS handshake is timed")
        let refused = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.tlsURL("/echo")))
        }
        #expect(refused.kind == .tls, "validation is back on for the next request")
    }

    @Test func http2MultiplexesConcurrentRequestsOnOneConnection() async throws {
        try #require(CurlHTTPClient.supportsHTTP2, "this libcurl has no HTTP/2")
        let base = try TestServers.nginxHTTP2()
        let client = CurlHTTPClient(configuration: .init(http2: true))
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for n in 0..<20 {
                group.addTask {
                    let response = try await client.perform(
                        HTTPRequest(url: base.appendingPathComponent("r\(n)"), validatesTLS: false))
                    return String(decoding: response.body, as: UTF8.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 20)
        #expect(answers.allSatisfy { $0.hasPrefix("HTTP/2.0 ") }, "\(answers)")
        let connections = Set(answers.map { $0.split(separator: " ").last ?? "" })
        #expect(
            connections.count == 1, "20 concurrent requests on \(connections.count) connections")
    }

    @Test func http1IsSpokenUnlessHTTP2IsAskedFor() async throws {
        let base = try TestServers.nginxHTTP2()
        let response = try await CurlHTTPClient().perform(
            HTTPRequest(url: base.appendingPathComponent("one"), validatesTLS: false))
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("HTTP/1.1 "))
    }

    @Test func perHostConnectionLimitIsHonoured() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("perhost")
        let client = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 2))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await client.perform(
                        HTTPRequest(url: server.url("/slow?ms=500&key=\(key)"))
                    )
                    .status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(try await server.maxConcurrency(of: key) == 2)
    }

    @Test func concurrentRequestsSpreadOverTheEventLoopsWithinTheConnectionLimit() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 4, eventLoops: 2))
        #expect(client.statistics.eventLoops == 2)
        // One after another: the first loop each time, and its one kept-alive connection.
        var ports = Set<Int>()
        for _ in 0..<3 {
            ports.insert(
                try Echo(try await client.perform(HTTPRequest(url: server.url("/echo")))).peerPort)
        }
        #expect(ports.count == 1, "sequential requests on \(ports.count) connections")
        // Eight at once: both loops at work, and four connections in all, not four each. Read
        // from each loop's completed count, not by watching for a moment when all eight are in
        // flight: a loaded machine can starve the watcher past the whole window.
        let completedBefore = client.loops.map(\.statistics.completedTransfers)
        let key = FixtureServer.uniqueKey("loops")
        let requests = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await client.perform(
                            HTTPRequest(url: server.url("/slow?ms=600&key=\(key)"))
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(try await requests.value == Array(repeating: 200, count: 8))
        let completed = zip(client.loops.map(\.statistics.completedTransfers), completedBefore)
            .map { $0 - $1 }
        #expect(completed.reduce(0, +) == 8 && completed.allSatisfy { $0 > 0 }, "\(completed)")
        #expect(try await server.maxConcurrency(of: key) == 4)
        #expect(client.statistics.busyEventLoops == 0)
    }

    @Test func connectionLimitsAreSharedOutBetweenLoopsExactly() async throws {
        // Three connections over two loops are two and one, not one and one (or two each).
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 3, eventLoops: 2))
        let key = FixtureServer.uniqueKey("sharedlimit")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<9 {
                group.addTask {
                    _ = try await client.perform(
                        HTTPRequest(url: server.url("/slow?ms=300&key=\(key)")))
                }
            }
            try await group.waitForAll()
        }
        #expect(try await server.maxConcurrency(of: key) == 3)
        // A per-host limit of 1 cannot be shared: one loop runs, whatever was asked.
        #expect(
            CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 1, eventLoops: 4))
                .statistics.eventLoops == 1)
        #expect(
            CurlHTTPClient(configuration: .init(http2: true, eventLoops: 4)).statistics.eventLoops
                == 1, "HTTP/2 multiplexes on one connection: one loop")
    }

    @Test func shutdownEndsWaitingRequestsAndFreesEveryHandle() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient()
        _ = try await client.perform(HTTPRequest(url: server.url("/echo")))
        let slow = Task {
            try await client.perform(HTTPRequest(url: server.url("/slow?ms=600000"), timeout: 900))
        }
        // Until the loop has it (the request lasts ten minutes: a loaded machine cannot miss
        // it; the whole suite running alongside once kept it from starting for 10 s). A hang
        // guard of 300 s.
        let deadline = ContinuousClock.now + .seconds(300)
        while client.statistics.activeTransfers == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(client.statistics.activeTransfers == 1)
        client.shutdown()
        let error = try await #require(throws: HTTPError.self) { try await slow.value }
        #expect(error.kind == .cancelled)
        let counts = client.statistics
        #expect(counts.activeTransfers == 0 && counts.liveHandles == 0)
        #expect(counts.completedTransfers == 1 && counts.busyEventLoops == 0)
        let late = try await #require(throws: HTTPError.self) {
            try await client.perform(HTTPRequest(url: server.url("/echo")))
        }
        #expect(late.kind == .cancelled)
    }

    @Test func shutdownWhileRequestsArriveLeavesNoCallerWaiting() async throws {
        let server = try TestServers.fixture()
        for _ in 0..<5 {
            let client = CurlHTTPClient()
            let answered = Answered()
            // Unstructured tasks, so that a caller left waiting fails the test instead of
            // hanging it. Every ending is counted, with what it was: an error of another kind
            // is a finding of its own, not a caller left waiting.
            for _ in 0..<100 {
                Task {
                    do {
                        _ = try await client.perform(HTTPRequest(url: server.url("/slow?ms=50")))
                        answered.record("response")
                    } catch let error as HTTPError {
                        answered.record(error.kind == .cancelled ? "cancelled" : "\(error)")
                    }
                }
            }
            client.shutdown()
            // A hang guard, not a speed: the 100 end within a second on a quiet machine, and a
            // loaded one once kept the last task from starting for 25 s.
            let deadline = ContinuousClock.now + .seconds(300)
            while answered.count < 100, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let endings = answered.endings
            #expect(answered.count == 100, "every request ended: \(endings)")
            #expect(
                endings.keys.allSatisfy { ["response", "cancelled"].contains($0) },
                "each with a response or .cancelled: \(endings)")
            #expect(client.statistics.liveHandles == 0)
        }
    }

    final class Answered: @unchecked Sendable {
        private let lock = NSLock()
        private var value: [String: Int] = [:]
        var count: Int { lock.withLock { value.values.reduce(0, +) } }
        var endings: [String: Int] { lock.withLock { value } }
        func record(_ ending: String) { lock.withLock { value[ending, default: 0] += 1 } }
    }

    @Test func handlesAreReusedNotMultiplied() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient()
        for _ in 0..<20 { _ = try await client.perform(HTTPRequest(url: server.url("/echo"))) }
        #expect(client.statistics.liveHandles == 1)
        #expect(client.statistics.completedTransfers == 20)
    }

    @Test func curlErrorTextAndCodeAreKept() async throws {
        let url = URL(string: "http://127.0.0.1:\(unusedLoopbackPort())/")!
        let error = try await #require(throws: HTTPError.self) {
            try await CurlHTTPClient().perform(HTTPRequest(url: url))
        }
        #expect(error.kind == .connect)
        #expect(error.underlyingCode == 7, "CURLE_COULDNT_CONNECT")
        #expect(!error.message.isEmpty)
    }
}
