import Courier
import CourierTesting
import Foundation
import Testing

/// The host-throttling middleware on a manual clock: which requests wait, how long (each sleep
/// is recorded), and which are refused.
@Suite struct HostThrottlingHTTPClientTests {
    static func get(_ url: String) -> HTTPRequest { HTTPRequest(url: URL(string: url)!) }

    @Test func aRetryAfterPausesTheOtherRequestsToThatHostOnly() async throws {
        let time = ManualTimeSource()
        let hosts = HostThrottles(time: time)
        let stub = ScriptedClient([
            "http://a.test/limited": [(429, ["Retry-After": "2"])]
        ])
        let waited = WaitLog()
        let client = HostThrottlingHTTPClient(
            wrapping: stub, hosts: hosts, maxDelay: 30, onWait: waited.add)
        #expect(try await client.perform(Self.get("http://a.test/limited")).status == 429)
        // Another host, and the same host name on another port, are not paused.
        _ = try await client.perform(Self.get("http://b.test/other"))
        _ = try await client.perform(Self.get("http://a.test:8080/other"))
        #expect(time.sleeps.isEmpty)
        // Any other request to the origin waits for the pause.
        _ = try await client.perform(Self.get("http://a.test/other"))
        #expect(time.sleeps == [.seconds(2)])
        #expect(waited.seconds == [2])
    }

    @Test func aPauseLongerThanMaxDelayIsRefusedUnsent() async throws {
        let time = ManualTimeSource()
        let hosts = HostThrottles(time: time)
        let stub = ScriptedClient(["http://a.test/first": [(503, ["Retry-After": "120"])]])
        let client = HostThrottlingHTTPClient(wrapping: stub, hosts: hosts, maxDelay: 30)
        _ = try await client.perform(Self.get("http://a.test/first"))
        let error = await #expect(throws: HTTPError.self) {
            try await client.perform(Self.get("http://a.test/second"))
        }
        #expect(error?.kind == .throttled)
        #expect(
            error?.message
                == "http://a.test:80 asked for a pause (Retry-After) of 120 s more, more than maxDelay 30 s; not sent",
            "\(String(describing: error))")
        #expect(stub.paths == ["/first"], "nothing more was sent")
        #expect(time.sleeps.isEmpty)
    }

    @Test func repeated429sHalveThePaceAndSuccessesBringItBack() async throws {
        let time = ManualTimeSource()
        let hosts = HostThrottles(
            settings: HostThrottle.Settings(ceiling: 8, increase: 2), time: time)
        let stub = ScriptedClient(["http://a.test/x": [(429, [:]), (429, [:])]])
        let client = HostThrottlingHTTPClient(wrapping: stub, hosts: hosts)
        let origin = try #require(Origin(URL(string: "http://a.test/")!))
        var rates: [Double?] = []
        for _ in 0..<7 {
            _ = try await client.perform(Self.get("http://a.test/x"))
            rates.append(hosts.throttle(for: origin)?.rate)
        }
        // 8 → 4 → 2 by the two 429s, then +2 a success up to the ceiling, never past it.
        #expect(rates == [4, 2, 4, 6, 8, 8, 8])
        // Each request waits one interval of the rate set before it.
        let expected: [Double] = [1.0 / 4, 1.0 / 2, 1.0 / 4, 1.0 / 6, 1.0 / 8]
        let sleeps = time.sleeps.map {
            Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
        }
        #expect(sleeps.count == expected.count, "\(sleeps)")
        for (slept, interval) in zip(sleeps, expected) {
            #expect(abs(slept - interval) < 1e-9, "\(sleeps)")
        }
    }

    @Test func aQuotaAnnouncedByTheServerSpreadsTheRest() async throws {
        let time = ManualTimeSource()
        let hosts = HostThrottles(time: time)
        func quota(_ remaining: Int, reset: Int) -> (Int, HTTPHeaders) {
            (
                200,
                [
                    "RateLimit-Limit": "20", "RateLimit-Remaining": "\(remaining)",
                    "RateLimit-Reset": "\(reset)",
                ]
            )
        }
        let stub = ScriptedClient([
            "http://a.test/q": [quota(2, reset: 4), quota(1, reset: 4), quota(0, reset: 2)]
        ])
        let client = HostThrottlingHTTPClient(wrapping: stub, hosts: hosts)
        for _ in 0..<4 { _ = try await client.perform(Self.get("http://a.test/q")) }
        // Two left of 20 in 4 s: the first of them goes at once, the second 2 s later, and the
        // next one waits for the reset, at 4 s.
        #expect(time.sleeps == [.seconds(2), .seconds(2)])
    }

    @Test func aFailedOrCancelledRequestIsNoLongerUnderWay() async throws {
        let time = ManualTimeSource()
        let hosts = HostThrottles(time: time)
        let stub = ScriptedClient(["http://a.test/down": [(0, [:])]])
        let client = HostThrottlingHTTPClient(wrapping: stub, hosts: hosts)
        await #expect(throws: HTTPError.self) {
            try await client.perform(Self.get("http://a.test/down"))
        }
        let origin = try #require(Origin(URL(string: "http://a.test/")!))
        #expect(hosts.throttle(for: origin)?.inFlight == 0)
    }
}

/// Answers each URL with its scripted statuses and headers, each once and in turn, then 200
/// (status 0 throws a connect error); records the paths it was sent.
final class ScriptedClient: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [String: [(Int, HTTPHeaders)]]
    private var sent: [String] = []

    init(_ script: [String: [(Int, HTTPHeaders)]]) { self.script = script }

    var paths: [String] { lock.withLock { sent } }

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (status, headers) = lock.withLock { () -> (Int, HTTPHeaders) in
            sent.append(request.url.path)
            let key = request.url.absoluteString
            guard let first = script[key]?.first else { return (200, [:]) }
            script[key]?.removeFirst()
            return first
        }
        if status == 0 { throw HTTPError(.connect, "refused", url: request.url) }
        return HTTPResponse(status: status, headers: headers, url: request.url)
    }
}

/// The waits a middleware reported.
final class WaitLog: @unchecked Sendable {
    private let lock = NSLock()
    private var waits: [TimeInterval] = []
    var seconds: [TimeInterval] { lock.withLock { waits } }
    func add(_ seconds: TimeInterval) { lock.withLock { waits.append(seconds) } }
}
