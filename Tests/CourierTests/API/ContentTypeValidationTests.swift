import Courier
import CourierTesting
import Foundation
import Testing

@Suite struct ContentTypeValidationTests {
    struct Item: Decodable, Sendable, Equatable { let id: Int }

    struct GetItem: APIRequest {
        typealias Response = Item
        var acceptableContentTypes: [String]? = ["application/json"]
        var path: String { "/item" }
    }

    let base = URL(string: "https://api.test/")!

    func client(_ stub: StubHTTPClient, accepting types: [String]? = nil) -> DefaultAPIClient {
        var configuration = APIConfiguration(baseURL: base)
        configuration.acceptableContentTypes = types
        return DefaultAPIClient(httpClient: stub, configuration: configuration)
    }

    func stub(_ contentType: String?, body: String = #"{"id":1}"#, status: Int = 200)
        -> StubHTTPClient
    {
        StubHTTPClient(
            status: status, body: body,
            headers: contentType.map { ["Content-Type": $0] } ?? [:])
    }

    @Test func anyTypeIsAcceptedByDefault() async throws {
        let item: Item = try await client(stub("text/plain")).perform(.get("/item"))
        #expect(item == Item(id: 1))
    }

    @Test(arguments: [
        "application/json", "Application/JSON; charset=utf-8", "application/json;charset=UTF-8",
    ])
    func matchingTypesPass(contentType: String) async throws {
        #expect(try await client(stub(contentType)).perform(GetItem()) == Item(id: 1))
    }

    @Test func aMismatchIsUnacceptableContentTypeWithStatusTypeAndRequest() async throws {
        let error = try await #require(throws: APIError.self) {
            try await client(stub("text/html; charset=utf-8", body: "<html>")).perform(GetItem())
        }
        #expect(error.kind == .unacceptableContentType)
        #expect(error.status == 200)
        #expect(error.contentType == "text/html; charset=utf-8")
        #expect(error.request?.url.absoluteString == "https://api.test/item")
        #expect(error.message.contains("text/html"), "\(error.message)")
        #expect(error.message.contains("expected application/json"), "\(error.message)")
    }

    @Test func theConfigurationAppliesUnlessTheRequestNamesItsOwn() async throws {
        let html = stub("text/html", body: "<html>")
        let strict = client(html, accepting: ["application/*"])
        let error = try await #require(throws: APIError.self) {
            let _: Item = try await strict.perform(.get("/item"))
        }
        #expect(error.kind == .unacceptableContentType)
        var lenient = Request<String>.get("/page")
        lenient.acceptableContentTypes = ["text/*"]
        #expect(try await strict.perform(lenient) == "<html>")
    }

    @Test func wildcardsAndStructuredSuffixes() async throws {
        let problem = stub("application/problem+json")
        let suffixed = client(problem, accepting: ["application/*+json"])
        #expect(try await suffixed.perform(GetItemAny()) == Item(id: 1))
        #expect(try await client(problem, accepting: ["*/*"]).perform(GetItemAny()) == Item(id: 1))
    }

    struct GetItemAny: APIRequest {
        typealias Response = Item
        var path: String { "/item" }
    }

    @Test func theStatusIsCheckedFirst() async throws {
        let error = try await #require(throws: APIError.self) {
            try await client(stub("text/html", body: "<html>", status: 502)).perform(GetItem())
        }
        #expect(error.kind == .unacceptableStatus)
    }

    @Test func anEmptyBodyPassesWhateverItsType() async throws {
        struct Delete: APIRequest {
            typealias Response = EmptyResponse
            var acceptableContentTypes: [String]? { ["application/json"] }
            var method: HTTPMethod { .delete }
            var path: String { "/item" }
        }
        _ = try await client(stub(nil, body: "", status: 204)).perform(Delete())
    }

    @Test func aBodyWithoutContentTypePassesOnlyTheFullWildcard() async throws {
        let untyped = stub(nil)
        let error = try await #require(throws: APIError.self) {
            try await client(untyped).perform(GetItem())
        }
        #expect(error.kind == .unacceptableContentType)
        #expect(error.message.contains("no Content-Type"), "\(error.message)")
        #expect(try await client(untyped, accepting: ["*/*"]).perform(GetItemAny()) == Item(id: 1))
    }

    @Test func aPatternThatIsNotAMediaTypeIsAnInvalidRequest() async throws {
        let error = try await #require(throws: APIError.self) {
            try await client(stub("application/json"), accepting: ["json"]).perform(GetItemAny())
        }
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains("'json'"), "\(error.message)")
    }

    @Test func htmlWhereJSONWasExpectedSaysSo() async throws {
        let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>"
        let error = try await #require(throws: APIError.self) {
            let _: Item = try await client(stub("text/html", body: page)).perform(.get("/item"))
        }
        #expect(error.kind == .decoding)
        #expect(
            error.message.hasPrefix(
                #"expected JSON, the server answered text/html (first bytes: "<!DOCTYPE html>"#),
            "\(error.message)")
        #expect(error.message.hasSuffix(#"…")"#), "the body is longer than what is shown")
    }

    @Test func aMissingKeyInJSONKeepsTheKeyPathWhateverTheType() async throws {
        let error = try await #require(throws: APIError.self) {
            let _: Item = try await client(stub("text/plain", body: #"{"name":1}"#))
                .perform(.get("/item"))
        }
        #expect(error.message.contains(#"missing key "id""#), "\(error.message)")
    }

    @Test func brokenJSONLabelledJSONKeepsTheDecodingError() async throws {
        let error = try await #require(throws: APIError.self) {
            let _: Item = try await client(stub("application/json", body: "{oops"))
                .perform(.get("/item"))
        }
        #expect(error.kind == .decoding)
        #expect(!error.message.contains("expected JSON"), "\(error.message)")
    }
}
