import Courier
import CourierTesting
import Foundation
import Testing

/// OAuth2 token requests as RFC 6749 writes them, and the provider's decisions: one request for
/// many callers, replacement before expiry on an injected clock, rotation, kept and retried
/// failures. No network: a token endpoint in memory.
@Suite("OAuth2TokenProvider")
struct OAuth2TokenProviderTests {
    static let tokenURL = URL(string: "https://auth.test/oauth/token?tenant=t1")!

    static func configuration(
        _ grant: OAuth2Configuration.Grant = .clientCredentials,
        secret: String? = "s:e/c ret+é", auth: OAuth2Configuration.ClientAuthentication = .basic
    ) -> OAuth2Configuration {
        OAuth2Configuration(
            tokenURL: tokenURL, grant: grant, clientID: "my client", clientSecret: secret,
            scope: "read write", clientAuthentication: auth)
    }

    /// A token endpoint in memory: answers each request with the next of `answers` (the last
    /// one repeated), after `delay`; records the requests' form fields.
    final class Endpoint: HTTPClient, @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [(Int, String)]
        private var received: [HTTPRequest] = []
        let delay: Duration

        init(_ answers: [(Int, String)], delay: Duration = .zero) {
            self.answers = answers
            self.delay = delay
        }

        var requests: [HTTPRequest] { lock.withLock { received } }

        /// The form fields of request `index`.
        func fields(_ index: Int) -> [String: String] {
            let body = String(decoding: requests[index].body ?? Data(), as: UTF8.self)
            var fields: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).removingPercentEncoding ?? String($0)
                }
                fields[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return fields
        }

        func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
            let (status, body) = lock.withLock { () -> (Int, String) in
                received.append(request)
                return answers.count > 1 ? answers.removeFirst() : answers[0]
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            let type = body.hasPrefix("{") ? "application/json" : "text/html"
            return HTTPResponse(
                status: status, headers: ["Content-Type": type], body: Data(body.utf8),
                url: request.url)
        }
    }

    static func token(_ value: String, expiresIn: Int? = 3600, refresh: String? = nil) -> (
        Int, String
    ) {
        var fields = [#""access_token": "\#(value)""#, #""token_type": "Bearer""#]
        if let expiresIn { fields.append(#""expires_in": \#(expiresIn)"#) }
        if let refresh { fields.append(#""refresh_token": "\#(refresh)""#) }
        return (200, "{" + fields.joined(separator: ", ") + "}")
    }

    // MARK: - The request

    @Test func clientCredentialsArePostedAsAFormWithBasicAuthentication() throws {
        let request = Self.configuration().tokenRequest()
        #expect(request.method == .post)
        #expect(request.url == Self.tokenURL, "the endpoint's query is kept")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        // RFC 6749 §2.3.1: id and secret form-encoded, then joined with ":" and base64'd.
        let expected = Data("my%20client:s%3Ae%2Fc%20ret%2B%C3%A9".utf8).base64EncodedString()
        #expect(request.headers["Authorization"] == "Basic \(expected)")
        #expect(
            String(decoding: request.body ?? Data(), as: UTF8.self)
                == "grant_type=client_credentials&scope=read%20write")
        #expect(request.isSecretHeader("Authorization"))
        #expect(request.bodyIsSecret, "a redirect elsewhere must not carry it")
    }

    @Test func bodyAuthenticationPutsTheClientInTheForm() async throws {
        let stub = Endpoint([Self.token("a1")])
        let request = Self.configuration(auth: .body).tokenRequest()
        #expect(request.headers["Authorization"] == nil)
        _ = try await stub.perform(request)
        let fields = stub.fields(0)
        #expect(fields["client_id"] == "my client")
        #expect(fields["client_secret"] == "s:e/c ret+é")
        #expect(fields["grant_type"] == "client_credentials")
    }

    @Test func aPublicClientNamesItselfInTheBody() throws {
        let request = Self.configuration(.refreshToken("rt0"), secret: nil).tokenRequest()
        #expect(request.headers["Authorization"] == nil)
        let body = String(decoding: request.body ?? Data(), as: UTF8.self)
        #expect(
            body
                == "grant_type=refresh_token&refresh_token=rt0&scope=read%20write&client_id=my%20client"
        )
    }

    @Test func descriptionsNameNoSecret() {
        let configuration = Self.configuration(.refreshToken("rt-secret-0"))
        #expect(!configuration.description.contains("s:e/c"))
        #expect(!configuration.description.contains("rt-secret"))
        #expect(configuration.description.contains("auth.test"))
    }

    // MARK: - The response

    @Test(
        "a response that is no token says what came",
        arguments: [
            (
                400, #"{"error": "invalid_client", "error_description": "Client\nunknown"}"#,
                "answered 400: invalid_client (Client unknown)", true
            ),
            (200, #"{"error": "invalid_scope"}"#, "answered 200: invalid_scope", true),
            (
                503, "<html>down</html>", "answered 503 with no OAuth error (text/html, 17 bytes)",
                false
            ),
            (429, "{}", "answered 429 with no OAuth error", false),
            (
                200, "<html>login</html>",
                "answered 200 with a body that is not a JSON object (text/html", true
            ),
            (200, #"{"token_type": "bearer"}"#, "answered 200 without an access_token", true),
            (200, #"{"access_token": "x", "token_type": "mac"}"#, #"a token of type "mac""#, true),
            (302, "", "a redirect", true),
        ])
    func failures(status: Int, body: String, message: String, permanent: Bool) throws {
        let response = HTTPResponse(
            status: status,
            headers: ["Content-Type": body.hasPrefix("{") ? "application/json" : "text/html"],
            body: Data(body.utf8), url: Self.tokenURL)
        guard case .failure(let error) = Self.configuration().token(from: response) else {
            Issue.record("\(status) \(body) gave a token")
            return
        }
        #expect(error.description.contains(message), "\(error)")
        #expect(
            error.description.hasPrefix("token endpoint https://auth.test/oauth/token?tenant=t1"))
        #expect(error.isPermanent == permanent)
    }

    @Test func aTokenResponseIsRead() throws {
        let body =
            #"{"access_token": "a1", "token_type": "bearer", "expires_in": "120", "refresh_token": "r2", "scope": "read"}"#
        let token = try Self.configuration().token(
            from: HTTPResponse(status: 200, body: Data(body.utf8), url: Self.tokenURL)
        ).get()
        #expect(
            token
                == OAuth2Token(accessToken: "a1", expiresIn: 120, refreshToken: "r2", scope: "read")
        )
    }

    // MARK: - The provider

    @Test func concurrentCallersShareOneRequest() async throws {
        let endpoint = Endpoint([Self.token("a1"), Self.token("a2")], delay: .milliseconds(200))
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await provider.currentToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "a1", count: 20))
        #expect(endpoint.requests.count == 1)
    }

    /// A run that stops cancels its tasks; one cancelled on its way to the token must not ask
    /// for one (a loaded run sent a second token request in its grace period).
    @Test func aCancelledCallerAsksForNoToken() async throws {
        let endpoint = Endpoint([Self.token("a1")])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        let caller = Task { () async throws -> String in
            // Waits for its cancellation, then asks.
            try? await Task.sleep(for: .seconds(86_400))
            return try await provider.currentToken()
        }
        caller.cancel()
        await #expect(throws: HTTPError.self) { try await caller.value }
        #expect(endpoint.requests.isEmpty)
        // A caller that is not cancelled asks as before.
        #expect(try await provider.currentToken() == "a1")
        #expect(endpoint.requests.count == 1)
    }

    @Test func aTokenIsReplacedATenthOfItsLifetimeBeforeItExpires() async throws {
        let time = ManualTimeSource()
        let endpoint = Endpoint([Self.token("a1", expiresIn: 60), Self.token("a2", expiresIn: 60)])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint, time: time)
        #expect(try await provider.currentToken() == "a1")
        try await time.sleep(for: .seconds(53))
        #expect(try await provider.currentToken() == "a1", "7 s left, the margin is 6")
        #expect(endpoint.requests.count == 1)
        try await time.sleep(for: .seconds(1.5))
        #expect(try await provider.currentToken() == "a2", "5.5 s left")
        #expect(endpoint.requests.count == 2)
        #expect(try await provider.currentAccessToken().expiresAt == nil, "the provider decides")
        #expect(OAuth2TokenProvider.refreshMargin(lifetime: 3600) == 30)
    }

    @Test func aTokenWithoutALifetimeIsKeptUntilRejected() async throws {
        let time = ManualTimeSource()
        let endpoint = Endpoint([Self.token("a1", expiresIn: nil), Self.token("a2")])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint, time: time)
        #expect(try await provider.currentToken() == "a1")
        try await time.sleep(for: .seconds(86_400))
        #expect(try await provider.currentToken() == "a1")
        #expect(try await provider.refreshToken(rejected: "a1") == "a2")
        #expect(endpoint.requests.count == 2)
    }

    @Test func aRotatedRefreshTokenIsPresentedNext() async throws {
        let endpoint = Endpoint([
            Self.token("a1", refresh: "rt1"), Self.token("a2"), Self.token("a3", refresh: "rt3"),
            Self.token("a4"),
        ])
        let provider = OAuth2TokenProvider(
            Self.configuration(.refreshToken("rt0")), client: endpoint)
        #expect(try await provider.currentToken() == "a1")
        #expect(try await provider.refreshToken(rejected: "a1") == "a2")
        #expect(try await provider.refreshToken(rejected: "a2") == "a3")
        #expect(try await provider.refreshToken(rejected: "a3") == "a4")
        let presented = (0..<4).map { endpoint.fields($0)["refresh_token"] }
        #expect(presented == ["rt0", "rt1", "rt1", "rt3"], "a response without one keeps the last")
        #expect(endpoint.fields(0)["grant_type"] == "refresh_token")
    }

    @Test func rejectionsWithOneTokenShareOneRefresh() async throws {
        let endpoint = Endpoint(
            [Self.token("a1"), Self.token("a2"), Self.token("a3")], delay: .milliseconds(100))
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        #expect(try await provider.currentToken() == "a1")
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await provider.refreshToken(rejected: "a1") } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "a2", count: 10))
        // A request that was rejected with a1 after the refresh takes a2 without a request.
        #expect(try await provider.refreshToken(rejected: "a1") == "a2")
        #expect(endpoint.requests.count == 2)
    }

    @Test func rejectionsBeyondTheWindowFail() async throws {
        let endpoint = Endpoint([Self.token("a1"), Self.token("a2"), Self.token("a3")])
        let provider = OAuth2TokenProvider(
            Self.configuration(), client: endpoint, time: ManualTimeSource(),
            rejectionWindow: RefreshWindow(maxRefreshes: 1, interval: 60))
        #expect(try await provider.currentToken() == "a1")
        #expect(try await provider.refreshToken(rejected: "a1") == "a2")
        await #expect(throws: ExcessiveRefreshError.self) {
            try await provider.refreshToken(rejected: "a2")
        }
        #expect(endpoint.requests.count == 2)
    }

    @Test func aPermanentFailureIsKeptAndNotAskedAgain() async throws {
        let endpoint = Endpoint([(400, #"{"error": "invalid_client"}"#), Self.token("a1")])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        for _ in 0..<3 {
            await #expect(throws: OAuth2Error.self) { try await provider.currentToken() }
        }
        #expect(endpoint.requests.count == 1)
    }

    @Test func aTransientFailureIsAskedAgain() async throws {
        let endpoint = Endpoint([(503, "busy"), Self.token("a1")])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        await #expect(throws: OAuth2Error.self) { try await provider.currentToken() }
        #expect(try await provider.currentToken() == "a1")
        #expect(endpoint.requests.count == 2)
    }

    @Test func aTransportFailureNamesTheEndpoint() async throws {
        let stub = StubHTTPClient()
        stub.fail(.post, "/oauth/token", with: .connect)
        let provider = OAuth2TokenProvider(Self.configuration(), client: stub)
        do {
            _ = try await provider.currentToken()
            Issue.record("no error")
        } catch let error as OAuth2Error {
            #expect(error.description.contains("https://auth.test/oauth/token"))
            #expect(error.description.contains("connect"))
            #expect(!error.isPermanent)
        }
    }

    @Test func everyIssuedTokenIsAnnouncedBeforeItIsHandedOut() async throws {
        let endpoint = Endpoint([Self.token("a1", refresh: "rt1")])
        let seen = Locked<[String]>([])
        let provider = OAuth2TokenProvider(
            Self.configuration(.refreshToken("rt0")), client: endpoint
        ) { token in
            seen.withLock { $0 += [token.accessToken, token.refreshToken ?? ""] }
        }
        let token = try await provider.currentToken()
        #expect(seen.withLock { $0 } == [token, "rt1"])
    }

    @Test func aRejectedTokenIsRefreshedAndTheRequestResentOnce() async throws {
        let endpoint = Endpoint([Self.token("a1"), Self.token("a2")])
        let provider = OAuth2TokenProvider(Self.configuration(), client: endpoint)
        let api = StubHTTPClient()
        api.route("*") { request in
            HTTPResponse(
                status: request.headers["Authorization"] == "Bearer a2" ? 200 : 401,
                url: request.url)
        }
        let client = AuthenticatingHTTPClient(wrapping: api, provider: provider)
        let response = try await client.perform(
            HTTPRequest(url: URL(string: "https://api.test/x")!))
        #expect(response.status == 200)
        #expect(api.requests.map { $0.headers["Authorization"] } == ["Bearer a1", "Bearer a2"])
        #expect(endpoint.requests.count == 2)
    }
}
