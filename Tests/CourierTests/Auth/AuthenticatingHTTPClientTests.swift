import Courier
import CourierTesting
import Foundation
import Testing

/// Token refresh on 401, with one refresh for many concurrent rejections.
@Suite("AuthenticatingHTTPClient")
struct AuthenticatingHTTPClientTests {
    /// Hands out `t1`, and on refresh `t2`, `t3`…; counts refreshes; can be told to fail.
    final class Tokens: TokenProvider, @unchecked Sendable {
        private let lock = NSLock()
        private var issued = 1
        private(set) var refreshes = 0
        let failing: Bool

        init(failing: Bool = false) { self.failing = failing }

        func currentToken() async throws -> String { lock.withLock { "t\(issued)" } }

        func refreshToken(rejected: String) async throws -> String {
            // Long enough for every concurrent rejection to arrive while it runs.
            try await Task.sleep(for: .milliseconds(100))
            struct Refused: Error {}
            if failing { throw Refused() }
            return lock.withLock {
                refreshes += 1
                issued += 1
                return "t\(issued)"
            }
        }
    }

    /// A server that accepts only `valid` as the bearer token.
    static func server(accepting valid: String?) -> StubHTTPClient {
        let stub = StubHTTPClient()
        stub.route("*") { request in
            let ok = valid != nil && request.headers["Authorization"] == "Bearer \(valid!)"
            return HTTPResponse(status: ok ? 200 : 401, url: request.url)
        }
        return stub
    }

    static let url = URL(string: "https://api.test/me")!

    @Test func concurrentRejectionsShareOneRefresh() async throws {
        let tokens = Tokens()
        let stub = Self.server(accepting: "t2")
        let client = AuthenticatingHTTPClient(wrapping: stub, provider: tokens)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await client.perform(HTTPRequest(url: Self.url)).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 50))
        #expect(tokens.refreshes == 1, "one refresh for fifty rejections")
        // A request rejected with t1 is sent once more with t2; one that started while the
        // refresh ran waited for it and went out with t2 at once.
        let sent = stub.requests.map { $0.headers["Authorization"] ?? "" }
        #expect(sent.filter { $0 == "Bearer t2" }.count == 50)
        #expect((1...50).contains(sent.filter { $0 == "Bearer t1" }.count))
        _ = try await client.perform(HTTPRequest(url: Self.url))
        #expect(
            stub.lastRequest?.headers["Authorization"] == "Bearer t2", "kept for later requests")
        #expect(stub.lastRequest?.isSecretHeader("Authorization") == true)
    }

    @Test func aFailedRefreshFailsEveryWaiter() async throws {
        let client = AuthenticatingHTTPClient(
            wrapping: Self.server(accepting: "t2"), provider: Tokens(failing: true))
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        _ = try await client.perform(HTTPRequest(url: Self.url))
                        return false
                    } catch let error as AuthenticatingHTTPClient<StubHTTPClient>.Failure {
                        return "\(error)".hasPrefix("cannot get an access token")
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(failures == Array(repeating: true, count: 50))
    }

    @Test func aServerThatRejectsEveryTokenCannotMakeItLoop() async throws {
        let stub = Self.server(accepting: nil)
        let client = AuthenticatingHTTPClient(wrapping: stub, provider: Tokens())
        let response = try await client.perform(HTTPRequest(url: Self.url))
        #expect(response.status == 401)
        #expect(stub.requests.count == 2, "sent once more, with the refreshed token, no more")
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])
    }

    @Test func aSignClosureCarriesTheTokenAndWillResendSeesTheRejection() async throws {
        let stub = StubHTTPClient()
        stub.route("*") { request in
            HTTPResponse(status: request.headers["X-Token"] == "v=t2" ? 200 : 401, url: request.url)
        }
        let rejections = Locked<[Int]>([])
        let client = AuthenticatingHTTPClient(
            wrapping: stub, provider: Tokens(),
            willResend: { response in rejections.withLock { $0.append(response.status) } }
        ) { request, token in
            var request = request
            request.headers.replaceOrAdd("X-Token", "v=\(token)")
            request.secretHeaderNames.insert("x-token")
            return request
        }
        let response = try await client.perform(HTTPRequest(url: Self.url))
        #expect(response.status == 200)
        #expect(stub.requests.map { $0.headers["X-Token"] } == ["v=t1", "v=t2"])
        #expect(stub.requests.allSatisfy { $0.headers["Authorization"] == nil })
        #expect(rejections.withLock { $0 } == [401], "called once, between refresh and resend")
    }
}

extension AuthenticatingHTTPClientTests {
    struct Me: APIRequest {
        typealias Response = EmptyResponse
        var path: String { "/me" }
    }

    struct Elsewhere: APIRequest {
        typealias Response = EmptyResponse
        var path: String { "https://other.test/me" }
    }

    @Test("APIConfiguration .provider: tokens attached, refreshed once on 401, origin only")
    func providerInConfiguration() async throws {
        let tokens = Tokens()
        let stub = Self.server(accepting: "t2")
        let client = DefaultAPIClient(
            httpClient: stub,
            configuration: APIConfiguration(
                baseURL: URL(string: "https://api.test")!, auth: .provider(tokens)))
        _ = try await client.perform(Me())
        _ = try await client.perform(Me())
        #expect(tokens.refreshes == 1)
        #expect(
            stub.requests.map { $0.headers["Authorization"] } == [
                "Bearer t1", "Bearer t2", "Bearer t2",
            ])
        #expect(stub.requests.allSatisfy { $0.isSecretHeader("Authorization") })
        // Another origin never sees the token (the stub answers 401 to it: unacceptable).
        await #expect(throws: APIError.self) { try await client.perform(Elsewhere()) }
        #expect(stub.requests.last?.url.host == "other.test")
        #expect(stub.requests.last?.headers["Authorization"] == nil)
    }
}
