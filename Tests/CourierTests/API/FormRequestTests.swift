import Courier
import CourierTesting
import Foundation
import Testing

/// `queryParameters`, `Request.get(_:query:)` and `.form(value)` through the client.
@Suite struct FormRequestTests {
    struct Filter: Encodable, Sendable {
        let text: String
        let tags: [String]
        let since: Int?
    }

    let base = URL(string: "https://api.test/v1")!

    func client(_ stub: StubHTTPClient, formEncoder: FormEncoder = FormEncoder())
        -> DefaultAPIClient
    {
        var configuration = APIConfiguration(baseURL: base)
        configuration.formEncoder = formEncoder
        return DefaultAPIClient(httpClient: stub, configuration: configuration)
    }

    @Test func getWithAnEncodableQuery() async throws {
        let stub = StubHTTPClient(body: "")
        let _: Data = try await client(stub)
            .perform(.get("/search", query: Filter(text: "a b&c", tags: ["x", "y"], since: nil)))
        #expect(
            stub.lastRequest?.url.absoluteString
                == "https://api.test/v1/search?text=a%20b%26c&tags%5B%5D=x&tags%5B%5D=y")
    }

    @Test func deleteWithAnEncodableQuery() async throws {
        struct Which: Encodable, Sendable { let ids: [Int] }
        let stub = StubHTTPClient(body: "")
        let _: Data = try await client(stub).perform(.delete("/items", query: Which(ids: [1, 2])))
        #expect(stub.lastRequest?.method == .delete)
        #expect(stub.lastRequest?.url.query == "ids%5B%5D=1&ids%5B%5D=2")
    }

    @Test func queryParametersFollowQueryItemsWithTheConfigurationsEncoder() async throws {
        struct Search: APIRequest {
            typealias Response = Data
            var path: String { "/search" }
            var queryItems: [URLQueryItem]? { [URLQueryItem(name: "page", value: "2")] }
            var queryParameters: (any Encodable & Sendable)? {
                Filter(text: "t", tags: ["x", "y"], since: 5)
            }
        }
        let stub = StubHTTPClient(body: "")
        _ = try await client(stub, formEncoder: FormEncoder(arrayEncoding: .noBrackets))
            .perform(Search())
        #expect(
            stub.lastRequest?.url.absoluteString
                == "https://api.test/v1/search?page=2&text=t&tags=x&tags=y&since=5")
    }

    @Test func formContentIsURLEncodedWithItsContentType() async throws {
        struct Login: Encodable, Sendable {
            let user: String
            let password: String
            let remember: Bool
        }
        let stub = StubHTTPClient(body: "")
        let _: Data = try await client(stub)
            .perform(.post("/login", form: Login(user: "ada", password: "p+w=&", remember: true)))
        let request = try #require(stub.lastRequest)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.body == Data("user=ada&password=p%2Bw%3D%26&remember=true".utf8))
    }

    @Test func formContentTakesItsOwnEncoder() async throws {
        struct Flags: Encodable, Sendable { let on: Bool }
        struct Post: APIRequest {
            typealias Response = Data
            var method: HTTPMethod { .post }
            var path: String { "/flags" }
            var content: APIRequestBody? {
                .form(Flags(on: true), encoder: FormEncoder(boolEncoding: .numeric))
            }
        }
        let stub = StubHTTPClient(body: "")
        _ = try await client(stub).perform(Post())
        #expect(stub.lastRequest?.body == Data("on=1".utf8))
    }

    @Test func aValueThatDoesNotEncodeIsRefusedBeforeSending() async throws {
        struct Bad: Encodable, Sendable { let score: Double }
        let stub = StubHTTPClient(body: "")
        let queryError = try await #require(throws: APIError.self) {
            let _: Data = try await client(stub).perform(.get("/x", query: Bad(score: .infinity)))
        }
        #expect(queryError.kind == .invalidRequest)
        #expect(queryError.message.contains(#""score""#), "\(queryError.message)")
        let formError = try await #require(throws: APIError.self) {
            let _: Data = try await client(stub).perform(.post("/x", form: ["a", "b"]))
        }
        #expect(formError.kind == .invalidRequest)
        #expect(stub.lastRequest == nil, "nothing is sent")
    }
}
