import Courier
import CourierTesting
import Foundation
import Testing

/// The provider is asked before every request, a token known to be expired is refreshed
/// before it is sent, and a server that rejects every token meets the refresh window.
@Suite("AuthenticatingHTTPClient: token lifetime")
struct TokenLifetimeTests {
    static let url = URL(string: "https://api.test/me")!

    /// A server that accepts only the tokens in `valid` (read at each request).
    static func server(_ valid: Locked<Set<String>>) -> StubHTTPClient {
        let stub = StubHTTPClient()
        stub.route("*") { request in
            let token = request.headers["Authorization"]?.replacingOccurrences(
                of: "Bearer ", with: "")
            let ok = token.map { valid.withLock { $0 }.contains($0) } ?? false
            return HTTPResponse(status: ok ? 200 : 401, url: request.url)
        }
        return stub
    }

    /// A provider whose token rotates on its own (`rotate()`), and that counts its calls.
    final class Rotating: TokenProvider {
        let state = Locked((token: "a1", asked: 0, refreshes: 0))

        func rotate(to token: String) { state.withLock { $0.token = token } }

        func currentToken() async throws -> String {
            state.withLock {
                $0.asked += 1
                return $0.token
            }
        }

        func refreshToken(rejected: String) async throws -> String {
            state.withLock {
                $0.refreshes += 1
                $0.token = "r\($0.refreshes)"
                return $0.token
            }
        }
    }

    @Test("the provider is asked before each request: a token it renewed is used at once")
    func askedBeforeEachRequest() async throws {
        let valid = Locked<Set<String>>(["a1"])
        let stub = Self.server(valid)
        let tokens = Rotating()
        let client = AuthenticatingHTTPClient(wrapping: stub, provider: tokens)
        #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
        // The provider renews on its own (a background job, say), and the server moves on.
        tokens.rotate(to: "a2")
        valid.withLock { $0 = ["a2"] }
        #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer a1", "Bearer a2"])
        #expect(tokens.state.withLock { $0.refreshes } == 0, "no 401, no refresh")
        #expect(tokens.state.withLock { $0.asked } == 2)
    }

    /// A provider that knows when its token expires.
    final class Expiring: TokenProvider {
        let time: ManualTimeSource
        let state = Locked((token: "e1", expires: Date.distantFuture, refreshes: 0))

        init(time: ManualTimeSource, lifetime: TimeInterval) {
            self.time = time
            state.withLock { $0.expires = time.date().addingTimeInterval(lifetime) }
        }

        func currentToken() async throws -> String { state.withLock { $0.token } }

        func currentAccessToken() async throws -> AccessToken {
            state.withLock { AccessToken($0.token, expiresAt: $0.expires) }
        }

        func refreshToken(rejected: String) async throws -> String {
            let now = time.date()
            return state.withLock {
                $0.refreshes += 1
                $0.token = "e\($0.refreshes + 1)"
                $0.expires = now.addingTimeInterval(3600)
                return $0.token
            }
        }
    }

    @Test("a token known to expire is refreshed before it is sent: no dead token, no 401")
    func expiredTokenRefreshedFirst() async throws {
        let time = ManualTimeSource()
        let tokens = Expiring(time: time, lifetime: 100)
        let valid = Locked<Set<String>>(["e1"])
        let stub = Self.server(valid)
        let client = AuthenticatingHTTPClient(
            wrapping: stub, provider: tokens, expiryLeeway: 30, time: time)
        #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
        // 80 s later the token has 20 s left, inside the 30 s leeway: refreshed first.
        try await time.sleep(for: .seconds(80))
        valid.withLock { $0 = ["e2"] }
        #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer e1", "Bearer e2"])
        #expect(tokens.state.withLock { $0.refreshes } == 1)
    }

    /// Tokens that live `lifetime` seconds each, shorter than the client's leeway.
    final class ShortLived: TokenProvider {
        let time: ManualTimeSource
        let lifetime: TimeInterval
        let state = Locked((token: "s0", expires: Date.distantPast, refreshes: 0))

        init(time: ManualTimeSource, lifetime: TimeInterval) {
            self.time = time
            self.lifetime = lifetime
        }

        func currentToken() async throws -> String { state.withLock { $0.token } }

        func currentAccessToken() async throws -> AccessToken {
            state.withLock { AccessToken($0.token, expiresAt: $0.expires) }
        }

        func refreshToken(rejected: String) async throws -> String {
            let expires = time.date().addingTimeInterval(lifetime)
            return state.withLock {
                $0.refreshes += 1
                $0.token = "s\($0.refreshes)"
                $0.expires = expires
                return $0.token
            }
        }
    }

    @Test("tokens shorter-lived than the leeway: refreshed once each, never counted as rejections")
    func shortLivedTokens() async throws {
        let time = ManualTimeSource()
        let tokens = ShortLived(time: time, lifetime: 10)
        let stub = StubHTTPClient()
        stub.route("*") { HTTPResponse(status: 200, url: $0.url) }
        let client = AuthenticatingHTTPClient(
            wrapping: stub, provider: tokens,
            refreshWindow: RefreshWindow(maxRefreshes: 3, interval: 60), expiryLeeway: 30,
            time: time)
        for _ in 0..<6 {
            #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
            try await time.sleep(for: .seconds(1))
        }
        #expect(
            tokens.state.withLock { $0.refreshes } == 1, "one refresh, then used till it expired")
        try await time.sleep(for: .seconds(5))  // s1 has expired
        for _ in 0..<6 {
            #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 200)
            try await time.sleep(for: .seconds(11))
        }
        #expect(tokens.state.withLock { $0.refreshes } == 7, "each expiry refreshed, none refused")
    }

    @Test("a server that rejects every token: the refresh window ends the refreshing")
    func excessiveRefresh() async throws {
        let time = ManualTimeSource()
        let stub = Self.server(Locked([]))
        let tokens = Rotating()
        let client = AuthenticatingHTTPClient(
            wrapping: stub, provider: tokens,
            refreshWindow: RefreshWindow(maxRefreshes: 3, interval: 30), time: time)
        var statuses: [Int] = []
        var excessive = 0
        for _ in 0..<7 {
            do {
                statuses.append(try await client.perform(HTTPRequest(url: Self.url)).status)
            } catch let failure as AuthenticatingHTTPClient<StubHTTPClient>.Failure {
                #expect(failure.underlying is ExcessiveRefreshError)
                #expect("\(failure)".contains("excessive refresh"), "\(failure)")
                excessive += 1
            }
        }
        #expect(statuses == [401, 401, 401], "each refreshed once and resent once")
        #expect(excessive == 4)
        #expect(tokens.state.withLock { $0.refreshes } == 3, "not seven")
        // Three refreshes of two calls each, and the four refused calls' first tries.
        #expect(stub.requests.count == 10, "the refused calls sent their first try only")
        // Once the window has passed, a refresh is allowed again.
        try await time.sleep(for: .seconds(31))
        #expect(try await client.perform(HTTPRequest(url: Self.url)).status == 401)
        #expect(tokens.state.withLock { $0.refreshes } == 4)
    }

    @Test("refresh windows: a pure decision over the earlier refreshes")
    func windowDecision() {
        let window = RefreshWindow(maxRefreshes: 2, interval: 10)
        let start = ContinuousClock.now
        #expect(window.admit(after: [], now: start).allowed)
        #expect(window.admit(after: [start], now: start + .seconds(1)).allowed)
        #expect(
            !window.admit(after: [start, start + .seconds(1)], now: start + .seconds(2)).allowed)
        let later = window.admit(after: [start, start + .seconds(1)], now: start + .seconds(10.5))
        #expect(later.allowed)
        #expect(later.recent == [start + .seconds(1)])
    }
}
