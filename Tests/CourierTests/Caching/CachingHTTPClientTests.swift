import Courier
import CourierTesting
import Foundation
import Testing

/// The caching middleware over a stub server and a manual clock: freshness, revalidation,
/// `no-store`/`no-cache`, `Vary`, credentials in the key, and the disk store.
@Suite("CachingHTTPClient")
struct CachingHTTPClientTests {
    static let url = URL(string: "https://api.test/items?page=1")!

    /// A server whose representation is `version`: 200 with the body, or 304 when the request's
    /// `If-None-Match` names it.
    static func server(
        headers extra: HTTPHeaders = ["Cache-Control": "max-age=60"],
        version: Locked<Int> = Locked(1)
    ) -> StubHTTPClient {
        let stub = StubHTTPClient()
        stub.route("*") { request in
            let current = version.withLock { $0 }
            var headers = extra
            headers.add("ETag", "\"v\(current)\"")
            if request.headers["If-None-Match"] == "\"v\(current)\"" {
                return HTTPResponse(status: 304, headers: headers, url: request.url)
            }
            return HTTPResponse(
                status: 200, headers: headers, body: Data("body v\(current)".utf8),
                url: request.url)
        }
        return stub
    }

    static func text(_ response: HTTPResponse) -> String {
        String(decoding: response.body, as: UTF8.self)
    }

    @Test("fresh: answered from the store; stale: revalidated, a 304 gives the stored body")
    func freshnessAndRevalidation() async throws {
        let time = ManualTimeSource()
        let stub = Self.server()
        let client = CachingHTTPClient(wrapping: stub, time: time)
        let first = try await client.perform(HTTPRequest(url: Self.url))
        let second = try await client.perform(HTTPRequest(url: Self.url))
        #expect(Self.text(first) == "body v1" && Self.text(second) == "body v1")
        #expect(stub.requests.count == 1, "the second answer came from the store")

        try await time.sleep(for: .seconds(61))
        let third = try await client.perform(HTTPRequest(url: Self.url))
        #expect(third.status == 200)
        #expect(Self.text(third) == "body v1")
        #expect(stub.requests.count == 2)
        #expect(stub.lastRequest?.headers["If-None-Match"] == "\"v1\"")
        // The 304 renewed the freshness.
        _ = try await client.perform(HTTPRequest(url: Self.url))
        #expect(stub.requests.count == 2)
    }

    @Test("a changed representation replaces the stored one")
    func changed() async throws {
        let time = ManualTimeSource()
        let version = Locked(1)
        let stub = Self.server(headers: ["Cache-Control": "no-cache"], version: version)
        let client = CachingHTTPClient(wrapping: stub, time: time)
        #expect(Self.text(try await client.perform(HTTPRequest(url: Self.url))) == "body v1")
        #expect(Self.text(try await client.perform(HTTPRequest(url: Self.url))) == "body v1")
        #expect(stub.requests.count == 2, "no-cache: every use is revalidated")
        version.withLock { $0 = 2 }
        #expect(Self.text(try await client.perform(HTTPRequest(url: Self.url))) == "body v2")
        #expect(stub.lastRequest?.headers["If-None-Match"] == "\"v1\"")
        #expect(Self.text(try await client.perform(HTTPRequest(url: Self.url))) == "body v2")
        #expect(stub.lastRequest?.headers["If-None-Match"] == "\"v2\"")
    }

    @Test("no-store is never stored, and a request's no-store bypasses the cache")
    func noStore() async throws {
        let stub = Self.server(headers: ["Cache-Control": "no-store, max-age=60"])
        let client = CachingHTTPClient(wrapping: stub, time: ManualTimeSource())
        for _ in 0..<3 { _ = try await client.perform(HTTPRequest(url: Self.url)) }
        #expect(stub.requests.count == 3)
        #expect(stub.requests.allSatisfy { $0.headers["If-None-Match"] == nil })

        let fresh = Self.server()
        let other = CachingHTTPClient(wrapping: fresh, time: ManualTimeSource())
        _ = try await other.perform(HTTPRequest(url: Self.url))
        _ = try await other.perform(
            HTTPRequest(url: Self.url, headers: ["Cache-Control": "no-store"]))
        #expect(fresh.requests.count == 2)
    }

    @Test("Vary, credentials, methods and the caller's own conditionals")
    func keysAndBypasses() async throws {
        let stub = Self.server(headers: ["Cache-Control": "max-age=60", "Vary": "Accept"])
        let client = CachingHTTPClient(wrapping: stub, time: ManualTimeSource())
        _ = try await client.perform(HTTPRequest(url: Self.url, headers: ["Accept": "a/json"]))
        _ = try await client.perform(HTTPRequest(url: Self.url, headers: ["Accept": "a/json"]))
        #expect(stub.requests.count == 1)
        _ = try await client.perform(HTTPRequest(url: Self.url, headers: ["Accept": "text/csv"]))
        #expect(stub.requests.count == 2, "another Accept is another variant")

        let alice = HTTPRequest(url: Self.url, headers: ["Authorization": "Bearer alice"])
        let bob = HTTPRequest(url: Self.url, headers: ["Authorization": "Bearer bob"])
        _ = try await client.perform(alice)
        _ = try await client.perform(bob)
        #expect(stub.requests.count == 4, "credentials are part of the key")
        _ = try await client.perform(alice)
        #expect(stub.requests.count == 4)

        _ = try await client.perform(HTTPRequest(url: Self.url, method: .post))
        let own = try await client.perform(
            HTTPRequest(url: Self.url, headers: ["If-None-Match": "\"v1\""]))
        #expect(stub.requests.count == 6)
        #expect(own.status == 304, "the caller's own conditional gets the server's 304")
    }

    @Test("the disk store survives a new client and holds no credential or cookie")
    func diskStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = Self.server(
            headers: [
                "Cache-Control": "max-age=60", "Set-Cookie": "session=cookie-secret",
                "Vary": "Authorization",
            ])
        var request = HTTPRequest(
            url: URL(string: "https://api.test/items?api_key=query-secret")!,
            headers: ["Authorization": "Bearer token-secret"])
        request.secretQueryNames = ["api_key"]
        let time = ManualTimeSource()
        _ = try await CachingHTTPClient(
            wrapping: stub, store: try DiskHTTPCacheStore(folder: folder), time: time
        ).perform(request)
        let again = try await CachingHTTPClient(
            wrapping: stub, store: try DiskHTTPCacheStore(folder: folder), time: time
        ).perform(request)
        #expect(stub.requests.count == 1, "the second client read the first one's entry")
        #expect(Self.text(again) == "body v1")
        #expect(again.headers["Set-Cookie"] == nil)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bytes = try String(
                decoding: Data(contentsOf: folder.appendingPathComponent(file)), as: UTF8.self)
            for secret in ["token-secret", "query-secret", "cookie-secret"] {
                #expect(!bytes.contains(secret), "\(file) holds \(secret)")
            }
        }
    }

    @Test("freshness from Expires and Date, less the Age it came with")
    func lifetimes() {
        let headers: HTTPHeaders = [
            "Date": "Wed, 01 Jan 2025 00:00:00 GMT", "Expires": "Wed, 01 Jan 2025 00:10:00 GMT",
        ]
        #expect(HTTPCachePolicy.freshnessLifetime(headers) == 600)
        #expect(HTTPCachePolicy.freshnessLifetime(["Expires": "0"]) == 0)
        #expect(HTTPCachePolicy.freshnessLifetime(["Cache-Control": "public, max-age=30"]) == 30)
        #expect(HTTPCachePolicy.freshnessLifetime([:]) == nil)
        let now = Date(timeIntervalSince1970: 1_000_000)
        let stored = CachedResponse(
            status: 200, headers: ["Age": "50", "Cache-Control": "max-age=60"], body: Data(),
            storedAt: now.addingTimeInterval(-9))
        #expect(HTTPCachePolicy.age(of: stored, now: now) == 59)
        #expect(
            HTTPCachePolicy.decide(HTTPRequest(url: Self.url), stored: stored, now: now)
                == .useStored)
        #expect(
            HTTPCachePolicy.decide(
                HTTPRequest(url: Self.url), stored: stored, now: now.addingTimeInterval(2))
                == .fetch,
            "stale and nothing to revalidate with")
    }
}
