import Courier
import CourierTesting
import Foundation
import Testing

/// A request's own say in how the cache answers it: stale allowed, offline, revalidate.
@Suite("CachingHTTPClient: per-request cache use")
struct CacheUseTests {
    static let url = CachingHTTPClientTests.url

    static func request(_ use: HTTPCacheUse) -> HTTPRequest {
        var request = HTTPRequest(url: Self.url)
        request.setCacheUse(use)
        return request
    }

    @Test("storedElseLoad: a stale stored response answers, nothing is sent; none stored: loads")
    func storedElseLoad() async throws {
        let time = ManualTimeSource()
        let stub = CachingHTTPClientTests.server()
        let client = CachingHTTPClient(wrapping: stub, time: time)
        let loaded = try await client.perform(Self.request(.storedElseLoad))
        #expect(loaded.status == 200)
        #expect(stub.requests.count == 1, "nothing stored: loaded")
        try await time.sleep(for: .seconds(3600))
        let stale = try await client.perform(Self.request(.storedElseLoad))
        #expect(CachingHTTPClientTests.text(stale) == "body v1")
        #expect(stub.requests.count == 1, "an hour stale, answered from the store")
        _ = try await client.perform(HTTPRequest(url: Self.url))
        #expect(stub.requests.count == 2, "the standard rules revalidate it")
    }

    @Test("storedOnly: a stored response however stale, else 504, and nothing is ever sent")
    func storedOnly() async throws {
        let time = ManualTimeSource()
        let stub = CachingHTTPClientTests.server()
        let client = CachingHTTPClient(wrapping: stub, time: time)
        let offline = try await client.perform(Self.request(.storedOnly))
        #expect(offline.status == 504)
        #expect(stub.requests.isEmpty)
        _ = try await client.perform(HTTPRequest(url: Self.url))
        try await time.sleep(for: .seconds(86_400))
        let stored = try await client.perform(Self.request(.storedOnly))
        #expect(stored.status == 200)
        #expect(CachingHTTPClientTests.text(stored) == "body v1")
        #expect(stub.requests.count == 1)
    }

    @Test("revalidate: a fresh stored response is checked with the server")
    func revalidate() async throws {
        let stub = CachingHTTPClientTests.server()
        let client = CachingHTTPClient(wrapping: stub, time: ManualTimeSource())
        _ = try await client.perform(HTTPRequest(url: Self.url))
        let checked = try await client.perform(Self.request(.revalidate))
        #expect(checked.status == 200)
        #expect(stub.requests.count == 2)
        #expect(stub.lastRequest?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test("max-stale=N and max-age=N bound what the request accepts; must-revalidate wins")
    func bounds() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func stored(age: TimeInterval, _ control: String) -> CachedResponse {
            CachedResponse(
                status: 200, headers: ["Cache-Control": control, "ETag": "\"a\""], body: Data(),
                storedAt: now.addingTimeInterval(-age), varying: [:])
        }
        func decide(_ asked: String, _ response: CachedResponse) -> HTTPCachePolicy.Decision {
            HTTPCachePolicy.decide(
                HTTPRequest(url: Self.url, headers: ["Cache-Control": asked]), stored: response,
                now: now)
        }
        let staleBy30 = stored(age: 90, "max-age=60")
        #expect(decide("max-stale=60", staleBy30) == .useStored)
        #expect(decide("max-stale=10", staleBy30) != .useStored)
        #expect(decide("max-age=30", stored(age: 40, "max-age=60")) != .useStored)
        #expect(decide("max-age=50", stored(age: 40, "max-age=60")) == .useStored)
        #expect(decide("max-stale", stored(age: 90, "max-age=60, must-revalidate")) != .useStored)
        #expect(decide("only-if-cached", staleBy30) == .unsatisfiable)
        #expect(decide("only-if-cached, max-stale", staleBy30) == .useStored)
    }
}
