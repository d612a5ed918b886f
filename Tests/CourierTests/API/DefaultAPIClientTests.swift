import Courier
import CourierTesting
import Foundation
import Testing

@Suite struct DefaultAPIClientTests {
    struct User: Decodable, Sendable, Equatable {
        let id: Int
        let name: String
        let address: Address
        struct Address: Decodable, Sendable, Equatable { let city: String }
    }

    struct GetUser: APIRequest {
        typealias Response = User
        let id: Int
        var path: String { "/users/\(id)" }
        var headers: [String: String]? {
            ["Accept": "application/vnd.test+json", "X-Request": "1"]
        }
    }

    let base = URL(string: "https://api.test/v1")!

    func client(_ stub: StubHTTPClient, auth: Authentication? = nil) -> DefaultAPIClient {
        DefaultAPIClient(
            httpClient: stub,
            configuration: APIConfiguration(
                baseURL: base, auth: auth, headers: ["Accept": "application/json", "X-Config": "c"])
        )
    }

    @Test func decodesTheTypedResponse() async throws {
        let stub = StubHTTPClient(body: #"{"id":42,"name":"Ada","address":{"city":"London"}}"#)
        let user = try await client(stub).perform(GetUser(id: 42))
        #expect(user == User(id: 42, name: "Ada", address: .init(city: "London")))
        #expect(stub.lastRequest?.url.absoluteString == "https://api.test/v1/users/42")
        #expect(stub.lastRequest?.method == .get)
    }

    @Test func requestHeadersOverrideConfigurationHeaders() async throws {
        let stub = StubHTTPClient(body: #"{"id":1,"name":"a","address":{"city":"b"}}"#)
        _ = try await client(stub).perform(GetUser(id: 1))
        let headers = try #require(stub.lastRequest?.headers)
        #expect(headers.values(for: "Accept") == ["application/vnd.test+json"])
        #expect(headers["X-Config"] == "c")
        #expect(headers["X-Request"] == "1")
    }

    @Test func bearerAuth() async throws {
        let stub = StubHTTPClient(body: "[]")
        let _: [Int] = try await client(stub, auth: .bearer("tok")).perform(.get("/x"))
        #expect(stub.lastRequest?.headers["Authorization"] == "Bearer tok")
    }

    @Test func basicAuth() async throws {
        let stub = StubHTTPClient(body: "[]")
        let _: [Int] = try await client(stub, auth: .basic(user: "ada", password: "p:w"))
            .perform(.get("/x"))
        #expect(stub.lastRequest?.headers["Authorization"] == "Basic YWRhOnA6dw==")
    }

    @Test func headerAPIKeyIsMarkedSecret() async throws {
        let stub = StubHTTPClient(body: "[]")
        let _: [Int] = try await client(stub, auth: .header(name: "X-Api-Key", value: "k1"))
            .perform(.get("/x"))
        let request = try #require(stub.lastRequest)
        #expect(request.headers["x-api-key"] == "k1")
        #expect(request.isSecretHeader("X-API-KEY"))
    }

    @Test func queryAPIKey() async throws {
        let stub = StubHTTPClient(body: "[]")
        let _: [Int] = try await client(stub, auth: .query(name: "api_key", value: "a&b"))
            .perform(.get("/x", query: [URLQueryItem(name: "page", value: "2")]))
        #expect(
            stub.lastRequest?.url.absoluteString == "https://api.test/v1/x?page=2&api_key=a%26b")
    }

    @Test func jsonBodyIsEncodedWithItsContentType() async throws {
        struct NewItem: Encodable, Sendable { let name: String }
        let stub = StubHTTPClient(status: 201, body: "{}")
        let _: EmptyResponse = try await client(stub).perform(
            .post("/items", json: NewItem(name: "x")))
        let request = try #require(stub.lastRequest)
        #expect(request.method == .post)
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.body == Data(#"{"name":"x"}"#.utf8))
    }

    /// Trial CC: the same value went as `{"title":…,"tags":…}` and `{"tags":…,"title":…}`
    /// within one process. The default encoder sorts keys: the same value, the same bytes.
    @Test func aJSONBodyIsTheSameBytesEveryTime() async throws {
        struct Note: Encodable, Sendable {
            let title: String
            let tags: [String]
            let meta: [String: Int]
        }
        let stub = StubHTTPClient(status: 201, body: "{}")
        let note = Note(title: "x", tags: ["a"], meta: ["z": 1, "b": 2, "m": 3])
        for _ in 0..<20 {
            let _: EmptyResponse = try await client(stub).perform(.post("/notes", json: note))
            #expect(
                stub.lastRequest?.body
                    == Data(#"{"meta":{"b":2,"m":3,"z":1},"tags":["a"],"title":"x"}"#.utf8))
        }
    }

    @Test func unacceptableStatusCarriesStatusHeadersAndBody() async throws {
        struct Problem: Decodable { let error: String }
        let stub = StubHTTPClient(
            status: 422, body: #"{"error":"invalid"}"#, headers: ["X-Trace": "abc"])
        let error = try await #require(throws: APIError.self) {
            try await client(stub).perform(GetUser(id: 1))
        }
        #expect(error.kind == .unacceptableStatus)
        #expect(error.status == 422)
        #expect(error.response?.headers["X-Trace"] == "abc")
        #expect(try error.decodeBody(as: Problem.self).error == "invalid")
    }

    @Test func decodingErrorsNameTheFailingKey() async throws {
        let stub = StubHTTPClient(body: #"{"id":1,"name":"a","address":{"town":"x"}}"#)
        let error = try await #require(throws: APIError.self) {
            try await client(stub).perform(GetUser(id: 1))
        }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("address.city"), "\(error.message)")
    }

    @Test func typeMismatchNamesThePathWithIndexes() async throws {
        let stub = StubHTTPClient(
            body: #"[{"id":1,"name":"a","address":{"city":"x"}},{"id":"two"}]"#)
        let error = try await #require(throws: APIError.self) {
            let _: [User] = try await client(stub).perform(.get("/users"))
        }
        #expect(error.message.contains("[1].id"), "\(error.message)")
    }

    @Test func emptyBodiesDecodeIntoEmptyResponseAndOptionals() async throws {
        let stub = StubHTTPClient(status: 204, body: "")
        let _: EmptyResponse = try await client(stub).perform(.delete("/items/1"))
        let missing: User? = try await client(stub).perform(.get("/maybe"))
        #expect(missing == nil)
    }

    /// A 204 decoded into a value that must be there said "the server answered text/html
    /// (first bytes: "")" (trial X): it says the body is empty, and what decodes one.
    @Test func anEmptyBodyWhereAValueMustBeSaysSo() async throws {
        let stub = StubHTTPClient(status: 204, body: "", headers: ["Content-Type": "text/html"])
        let error = try await #require(throws: APIError.self) {
            let _: User = try await client(stub).perform(.get("/users/1"))
        }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("(status 204) has no body"), "\(error.message)")
    }

    /// A request's own `Authorization` (a per-call token) is sent, as its other headers
    /// replace the configuration's; the configured auth had replaced it (trial X). So is its
    /// own value of a `.header` key's field.
    @Test func aRequestsOwnCredentialsReplaceTheConfigured() async throws {
        struct AsAnother: APIRequest {
            typealias Response = [Int]
            var name = "Authorization"
            var path: String { "/x" }
            var headers: [String: String]? { [name: "Bearer per-call"] }
        }
        let stub = StubHTTPClient(body: "[]")
        _ = try await client(stub, auth: .bearer("configured")).perform(AsAnother())
        #expect(stub.lastRequest?.headers.values(for: "Authorization") == ["Bearer per-call"])
        _ = try await client(stub, auth: .header(name: "X-Api-Key", value: "k1"))
            .perform(AsAnother(name: "X-Api-Key"))
        #expect(stub.lastRequest?.headers.values(for: "X-Api-Key") == ["Bearer per-call"])
        let _: [Int] = try await client(stub, auth: .bearer("configured")).perform(.get("/x"))
        #expect(stub.lastRequest?.headers["Authorization"] == "Bearer configured")
        // A provided token too, which its middleware adds below: the provider is not asked,
        // and a 401 to the request's own token is the caller's, not refreshed.
        let tokens = CountedTokens()
        _ = try await client(stub, auth: .provider(tokens)).perform(AsAnother())
        #expect(stub.lastRequest?.headers.values(for: "Authorization") == ["Bearer per-call"])
        #expect(tokens.asked.withLock { $0 } == 0)
        let _: [Int] = try await client(stub, auth: .provider(tokens)).perform(.get("/x"))
        #expect(stub.lastRequest?.headers["Authorization"] == "Bearer provided")
        #expect(tokens.asked.withLock { $0 } == 1)
    }

    final class CountedTokens: TokenProvider {
        let asked = Locked(0)
        func currentToken() async throws -> String {
            asked.withLock { $0 += 1 }
            return "provided"
        }
        func refreshToken(rejected: String) async throws -> String { "provided" }
    }

    @Test func customAcceptedStatuses() async throws {
        struct Lookup: APIRequest {
            typealias Response = Data
            var path: String { "/lookup" }
            func accepts(status: Int) -> Bool { status == 200 || status == 404 }
        }
        let stub = StubHTTPClient(status: 404, body: "nope")
        let data = try await client(stub).perform(Lookup())
        #expect(data == Data("nope".utf8))
    }

    @Test func dataAndStringResponsesAreTheBodyAsItIs() async throws {
        let stub = StubHTTPClient(body: "not json \u{1}")
        let data: Data = try await client(stub).perform(.get("/bytes/16"))
        #expect(data == Data("not json \u{1}".utf8))
        let text: String = try await client(stub).perform(.get("/text"))
        #expect(text == "not json \u{1}")
    }

    @Test func emptyResponseIgnoresANonJSONBody() async throws {
        let stub = StubHTTPClient(body: "OK")
        let _: EmptyResponse = try await client(stub).perform(.post("/ping"))
    }

    @Test func seedStyleRequirementsReachTheRequest() async throws {
        struct Search: APIRequest {
            typealias Response = Data
            var path: String { "/search" }
            var method: HTTPMethod { .post }
            var headers: [String: String]? { ["X-B": "2", "X-A": "1"] }
            var body: Data? { Data("raw".utf8) }
            var queryItems: [URLQueryItem]? { [URLQueryItem(name: "q", value: "a b")] }
        }
        let stub = StubHTTPClient(body: "")
        _ = try await client(stub).perform(Search())
        let request = try #require(stub.lastRequest)
        #expect(request.url.absoluteString == "https://api.test/v1/search?q=a%20b")
        #expect(request.headers["X-A"] == "1")
        #expect(request.headers["X-B"] == "2")
        #expect(request.body == Data("raw".utf8))
        #expect(request.headers["Content-Type"] == nil, "raw bytes get no invented type")
    }

    @Test func bodyAndContentTogetherAreRefused() async throws {
        struct Both: APIRequest {
            typealias Response = Data
            var path: String { "/x" }
            var body: Data? { Data("a".utf8) }
            var content: APIRequestBody? { .json(["b": 1]) }
        }
        let stub = StubHTTPClient(body: "")
        let error = try await #require(throws: APIError.self) {
            try await client(stub).perform(Both())
        }
        #expect(error.kind == .invalidRequest)
        #expect(stub.lastRequest == nil, "nothing is sent")
    }

    @Test func anAbsolutePathToAnotherHostGetsNoCredentials() async throws {
        let stub = StubHTTPClient(body: "[]")
        let _: [Int] = try await client(stub, auth: .bearer("tok"))
            .perform(.get("https://elsewhere.test/x"))
        #expect(stub.lastRequest?.headers["Authorization"] == nil)
        let _: [Int] = try await client(stub, auth: .bearer("tok"))
            .perform(.get("https://api.test:443/v1/y"))
        #expect(stub.lastRequest?.headers["Authorization"] == "Bearer tok")
    }

    @Test func aQueryKeyNeverAppearsInErrorDescriptions() async throws {
        let stub = StubHTTPClient(status: 500, body: "")
        let error = try await #require(throws: APIError.self) {
            let _: [Int] = try await client(stub, auth: .query(name: "api_key", value: "s3cr3t"))
                .perform(.get("/x"))
        }
        #expect(!error.description.contains("s3cr3t"), "\(error)")
        #expect(!"\(try #require(stub.lastRequest))".contains("s3cr3t"))
    }

    @Test func multipartAndFileContentAreStreamedWithTheirContentType() async throws {
        struct Upload: APIRequest {
            typealias Response = EmptyResponse
            let content: APIRequestBody?
            var method: HTTPMethod { .post }
            var path: String { "/upload" }
        }
        let stub = StubHTTPClient()
        stub.respond(.post, "/upload", status: 204)
        let client = DefaultAPIClient(
            httpClient: stub,
            configuration: APIConfiguration(baseURL: URL(string: "https://api.test")!))
        var form = MultipartFormData(boundary: "B")
        form.append(field: "a", "1")
        _ = try await client.perform(Upload(content: .multipart(form)))
        #expect(stub.lastRequest?.streamedBody == form.body)
        #expect(stub.lastRequest?.body == nil)
        #expect(stub.lastRequest?.headers["Content-Type"] == "multipart/form-data; boundary=B")
        let file = URL(fileURLWithPath: "/tmp/report.csv")
        _ = try await client.perform(Upload(content: .file(file, contentType: "text/csv")))
        #expect(stub.lastRequest?.streamedBody == .file(file))
        #expect(stub.lastRequest?.headers["Content-Type"] == "text/csv")
    }
}
