import Courier
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

@Suite struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test func burstIsFreeThenTokensArriveAtTheRate() {
        var bucket = TokenBucket(perSecond: 5, burst: 2)
        #expect(bucket.reserve(at: start) == .zero)
        #expect(bucket.reserve(at: start) == .zero)
        #expect(bucket.reserve(at: start) == .milliseconds(200))
        #expect(bucket.reserve(at: start) == .milliseconds(400), "reservations queue up in order")
    }

    @Test func idleTimeRefillsUpToTheBurstOnly() {
        var bucket = TokenBucket(perSecond: 10, burst: 3)
        for _ in 0..<3 { _ = bucket.reserve(at: start) }
        let later = start.advanced(by: .seconds(60))
        for _ in 0..<3 { #expect(bucket.reserve(at: later) == .zero) }
        #expect(bucket.reserve(at: later) == .milliseconds(100))
    }

    @Test func partialRefill() {
        var bucket = TokenBucket(perSecond: 4, burst: 1)
        _ = bucket.reserve(at: start)
        #expect(bucket.reserve(at: start.advanced(by: .milliseconds(100))) == .milliseconds(150))
    }

    @Test func rateLimitingClientSleepsExactlyAsTheBucketSays() async throws {
        let time = ManualTimeSource()
        let stub = CountingClient()
        let client = RateLimitingHTTPClient(wrapping: stub, perSecond: 5, burst: 2, time: time)
        for _ in 0..<5 {
            _ = try await client.perform(HTTPRequest(url: URL(string: "http://a.test/")!))
        }
        #expect(time.sleeps == [.milliseconds(200), .milliseconds(200), .milliseconds(200)])
        #expect(stub.count == 5)
    }

    @Test func hostScopeGivesEachHostItsOwnBucket() async throws {
        let time = ManualTimeSource()
        let client = RateLimitingHTTPClient(
            wrapping: CountingClient(), perSecond: 1, burst: 1, scope: .host, time: time)
        for host in ["a.test", "b.test", "c.test"] {
            _ = try await client.perform(HTTPRequest(url: URL(string: "http://\(host)/")!))
        }
        #expect(time.sleeps.isEmpty)
        _ = try await client.perform(HTTPRequest(url: URL(string: "http://a.test/again")!))
        #expect(time.sleeps == [.seconds(1)])
    }
}

/// Answers 200 to everything and counts: for middleware logic tests only.
final class CountingClient: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    private let statuses: [Int]
    private let headers: HTTPHeaders

    init(statuses: [Int] = [200], headers: HTTPHeaders = [:]) {
        self.statuses = statuses
        self.headers = headers
    }

    var count: Int { lock.withLock { calls } }

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let index = lock.withLock { () -> Int in
            calls += 1
            return calls - 1
        }
        let status = statuses[min(index, statuses.count - 1)]
        if status == 0 { throw HTTPError(.connect, "refused", url: request.url) }
        return HTTPResponse(status: status, headers: headers, url: request.url)
    }
}
