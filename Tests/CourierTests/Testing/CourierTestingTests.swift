import Courier
import CourierTesting
import Foundation
import Testing

/// The test doubles of the `CourierTesting` product, used the way a library user would.
@Suite("CourierTesting")
struct CourierTestingTests {
    struct User: Decodable, Sendable, Equatable {
        let id: String
        let name: String
    }

    struct GetUser: APIRequest {
        typealias Response = User
        let id: String
        var path: String { "/v1/users/\(id)" }
    }

    struct ListUsers: APIRequest {
        typealias Response = [User]
        let page: Int
        var path: String { "/v1/users" }
        var queryItems: [URLQueryItem]? { [URLQueryItem(name: "page", value: String(page))] }
    }

    static let configuration = APIConfiguration(
        baseURL: URL(string: "https://api.example.test")!, apiKey: "test-key")

    @Test func stubAnswersByMethodAndPathAndRecordsRequests() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/v1/users/42", json: #"{"id": "42", "name": "Ada"}"#)
        stub.respond(.get, "/v1/users", json: #"[{"id": "1", "name": "Bo"}]"#)
        let client = DefaultAPIClient(httpClient: stub, configuration: Self.configuration)
        #expect(try await client.perform(GetUser(id: "42")) == User(id: "42", name: "Ada"))
        #expect(try await client.perform(ListUsers(page: 2)).map(\.name) == ["Bo"])
        let sent = stub.requests
        #expect(sent.count == 2)
        #expect(sent[1].url.query == "page=2")
        #expect(sent[0].headers["Authorization"] == "Bearer test-key")
    }

    @Test func laterRoutesWinAndClosuresSeeTheRequest() async throws {
        let stub = StubHTTPClient()
        stub.respond("/echo", status: 500)
        stub.route(.post, "/echo") { request in
            HTTPResponse(status: 201, body: request.body ?? Data(), url: request.url)
        }
        let response = try await stub.perform(
            HTTPRequest(
                url: URL(string: "https://h.test/echo")!, method: .post, body: Data("hi".utf8)))
        #expect(response.status == 201 && response.body == Data("hi".utf8))
        let other = try await stub.perform(HTTPRequest(url: URL(string: "https://h.test/echo")!))
        #expect(other.status == 500, "GET falls through to the route for any method")
    }

    @Test func transportFailuresAndUnmatchedRequests() async throws {
        let stub = StubHTTPClient()
        stub.fail(.get, "/slow", with: .timeout)
        await #expect(throws: HTTPError.self) {
            try await stub.perform(HTTPRequest(url: URL(string: "https://h.test/slow")!))
        }
        do {
            _ = try await stub.perform(HTTPRequest(url: URL(string: "https://h.test/nowhere")!))
            Issue.record("an unmatched request was answered")
        } catch let error as StubHTTPClient.Unmatched {
            #expect("\(error)" == "StubHTTPClient: no route for GET /nowhere")
        }
    }

    @Test func mockAPIClientRecordsAndReturns() async throws {
        let mock = MockAPIClient()
        mock.setMockResponse([User(id: "1", name: "Bo")])
        let users = try await mock.perform(ListUsers(page: 3))
        #expect(users.count == 1)
        #expect(mock.lastPath == "/v1/users")
        #expect(mock.lastQueryItems?.first?.value == "3")
        await #expect(throws: MockAPIClient.NoResponse.self) {
            try await mock.perform(GetUser(id: "1"))
        }
        mock.setMockError(URLError(.notConnectedToInternet))
        await #expect(throws: URLError.self) { try await mock.perform(ListUsers(page: 1)) }
        #expect(mock.requestCount == 3)
    }

    /// Trial VVV: a body given as `content` (library.md's own `CreateNote`) and query values
    /// given as `queryParameters` were recorded as `nil`: a service test could not check them.
    @Test("the mock records a content body and query parameters as the client sends them")
    func mockRecordsEncodedContent() async throws {
        struct Note: Codable, Sendable { let title: String }
        struct Filter: Encodable, Sendable { let tag: String }
        let mock = MockAPIClient()
        mock.setMockResponse(EmptyResponse())
        let _: EmptyResponse = try await mock.perform(
            Request<EmptyResponse>.post("/notes", json: Note(title: "hi")))
        #expect(mock.lastBody == Data(#"{"title":"hi"}"#.utf8))
        let _: EmptyResponse = try await mock.perform(
            Request<EmptyResponse>.get("/notes", query: Filter(tag: "a b")))
        #expect(mock.lastQueryItems == [URLQueryItem(name: "tag", value: "a b")])
        #expect(mock.lastBody == nil)
    }
}
