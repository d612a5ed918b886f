import Courier
import CourierTestSupport
import Foundation
import Testing

/// Every way a caller shows a response or an error (`print`, `String(reflecting:)`, `dump`,
/// `localizedDescription`) redacts the credentials the request carried, on both transports
/// (trial II: `print(response)` showed a `.query` API key in its URL, and `dump(error)` the
/// `Authorization` the request was sent with).
@Suite("secrets in what a caller prints")
struct SecretsShownConformanceTests {
    static let secret = "s3cr3t-Pw-9Q"

    /// Each form a secret could be shown in: as given, percent-encoded, in a Basic field.
    static func forms(of secret: String) -> [String] {
        [
            secret, URLBuilder.percentEncode(secret),
            Data("alice:\(secret)".utf8).base64EncodedString(),
        ]
    }

    static func shown(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        var shown = [String(describing: value), String(reflecting: value), dumped]
        if let error = value as? any Error { shown.append(error.localizedDescription) }
        return shown
    }

    static let auths: [(String, Authentication)] = [
        ("query", .query(name: "api_key", value: secret)),
        ("basic", .basic(user: "alice", password: secret)),
        ("bearer", .bearer(secret)),
        ("header", .header(name: "X-Custom-Key", value: secret)),
    ]

    @Test(
        "a response and an APIError show no credential, whatever shows them",
        arguments: TransportKind.allCases, auths.indices)
    func nothingShown(transport: TransportKind, auth: Int) async throws {
        let (name, authentication) = Self.auths[auth]
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: try TestServers.fixture().baseURL, auth: authentication))
        let ok = try await client.send(Request<Data>.get("/echo"))
        #expect(ok.response.status == 200)
        let carried = ok.response.requestHeaders.map(\.value) + [ok.response.url.absoluteString]
        #expect(
            carried.contains { value in Self.forms(of: Self.secret).contains { value.contains($0) }
            },
            "\(name): the request carried the secret (the test would prove nothing otherwise)")
        let error = try await #require(throws: APIError.self) {
            let _: Data = try await client.perform(.get("/status/404"))
        }
        #expect(error.status == 404)
        // A page that repeats the request, read as JSON: the message quotes its first bytes.
        struct Thing: Decodable, Sendable { let id: Int }
        let echoed = try await #require(throws: APIError.self) {
            let _: Thing = try await client.perform(Request<Thing>.get("/echo-html"))
        }
        #expect(echoed.kind == .decoding, "\(echoed)")
        let shown: [(String, Any)] = [
            ("response", ok.response), ("error", error), ("echoed", echoed),
            ("requestHeaders", ok.response.requestHeaders),
            ("error's requestHeaders", error.response?.requestHeaders as Any),
        ]
        for (what, value) in shown {
            for text in Self.shown(value) {
                for form in Self.forms(of: Self.secret) {
                    #expect(!text.contains(form), "\(name), \(what): \(text)")
                }
            }
        }
        #expect(String(describing: ok.response).contains("200 "), "a response says its status")
        #expect(error.localizedDescription == error.description)
    }
}

/// A request's own value for a `.header` key's field is as secret as the configured one.
@Suite("a request's own value for a header key")
struct OwnHeaderKeyConformanceTests {
    @Test(
        "a request's own value for the key's header is redacted and not sent to another origin",
        arguments: TransportKind.allCases)
    func ownValueIsSecret(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let own = "own-\(UUID().uuidString)"
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: server.baseURL, auth: .header(name: "X-Custom-Key", value: "configured")))
        let target = URLBuilder.percentEncode(server.otherHostURL("/echo").absoluteString)
        let request = Request<Data>.get(
            "/redirect?to=\(target)", headers: ["X-Custom-Key": own])
        let built = try client.makeHTTPRequest(for: request)
        var dumped = ""
        dump(built, to: &dumped)
        for text in ["\(built)", "\(built.headers)", dumped] {
            #expect(!text.contains(own), "\(text)")
        }
        let answer = try await client.send(request)
        #expect(answer.response.url.host == "localhost", "it went to the other origin")
        #expect(
            !String(decoding: answer.value, as: UTF8.self).contains(own),
            "the other origin got the key")
        #expect(!"\(answer.response.requestHeaders)".contains(own))
    }
}

/// A `.query` key the server copies into a `Location` on another origin is not sent there.
@Suite("a query key and a redirect to another origin")
struct QueryKeyRedirectConformanceTests {
    @Test(
        "a Location on another origin that repeats the query key goes without it",
        arguments: TransportKind.allCases)
    func keyLeftOut(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = "qk-\(UUID().uuidString)"
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: server.baseURL, auth: .query(name: "api_key", value: key)))
        // What a server that copies the query into its Location sends: the key, elsewhere.
        let elsewhere = server.otherHostURL("/echo").absoluteString + "?api_key=\(key)&page=2"
        let answer = try await client.send(
            Request<Data>.get("/redirect", query: [URLQueryItem(name: "to", value: elsewhere)]))
        #expect(answer.response.url.host == "localhost", "it went to the other origin")
        #expect(answer.response.url.query == "page=2", "\(answer.response.url)")
        #expect(!String(decoding: answer.value, as: UTF8.self).contains(key))
    }
}
