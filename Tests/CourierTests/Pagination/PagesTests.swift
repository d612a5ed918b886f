import Courier
import CourierTesting
import Foundation
import Testing

/// `pages(of:)` on an HTTP client and on the API client: each way an API links its pages, the
/// loop guard, the page limit, and what an error page does. The rules are the job runner's.
@Suite("pages(of:)")
struct PagesTests {
    static let base = URL(string: "https://api.test")!

    static func query(_ name: String, in request: HTTPRequest) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?
            .queryItems?.first { $0.name == name }?.value
    }

    static func json(_ text: String, _ request: HTTPRequest, headers: HTTPHeaders = [:])
        -> HTTPResponse
    {
        var headers = headers
        headers.replaceOrAdd("Content-Type", "application/json")
        return HTTPResponse(
            status: 200, headers: headers, body: Data(text.utf8), url: request.url,
            requestHeaders: request.headers)
    }

    static func bodies(_ pages: HTTPPages) async throws -> [String] {
        var bodies: [String] = []
        for try await page in pages { bodies.append(String(decoding: page.body, as: UTF8.self)) }
        return bodies
    }

    @Test func followsTheLinkHeaderUntilThereIsNoNext() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/items") { request in
            let page = Int(Self.query("page", in: request) ?? "1")!
            let link =
                page < 3
                ? #"</items?page=\#(page + 1)>; rel="next", </items?page=3>; rel="last""#
                : #"</items?page=1>; rel="first""#
            return Self.json("[\(page)]", request, headers: ["Link": link])
        }
        let first = HTTPRequest(url: URL(string: "https://api.test/items")!)
        #expect(try await Self.bodies(stub.pages(of: first)) == ["[1]", "[2]", "[3]"])
        #expect(stub.requests.map(\.url.absoluteString).last == "https://api.test/items?page=3")
    }

    @Test func sendsTheCursorBackUntilItIsMissing() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/events") { request in
            switch Self.query("after", in: request) {
            case nil: Self.json(#"{"data": [1], "meta": {"next": "c1"}}"#, request)
            case "c1": Self.json(#"{"data": [2], "meta": {"next": 12345678901234567890}}"#, request)
            default: Self.json(#"{"data": [3], "meta": {"next": null}}"#, request)
            }
        }
        let rule = PaginationRule(next: .cursor(pointer: "/meta/next", parameter: "after"))
        let first = HTTPRequest(url: URL(string: "https://api.test/events?limit=2")!)
        let bodies = try await Self.bodies(stub.pages(of: first, following: rule))
        #expect(bodies.count == 3)
        #expect(
            stub.requests.map(\.url.query) == [
                "limit=2", "limit=2&after=c1", "limit=2&after=12345678901234567890",
            ], "a numeric cursor is sent as written, not rounded through a Double")
    }

    @Test("a GraphQL cursor goes into the body's variables; hasNextPage false ends the pages")
    func graphQLCursorsMoveInTheBody() async throws {
        let stub = StubHTTPClient()
        stub.route(.post, "/graphql") { request in
            let body =
                try? JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any]
            let after = (body?["variables"] as? [String: Any])?["after"] as? String
            let (cursor, more) =
                after == nil ? ("c1", true) : after == "c1" ? ("c2", true) : ("c3", false)
            return Self.json(
                #"{"data": {"items": {"pageInfo": {"endCursor": "\#(cursor)", "hasNextPage": \#(more)}}}}"#,
                request)
        }
        // The stop given to the initialiser, as docs/library.md writes it (trial WW).
        let rule = PaginationRule(
            next: .bodyCursor(pointer: "/data/items/pageInfo/endCursor", field: "/variables/after"),
            stopWhenFalse: "/data/items/pageInfo/hasNextPage")
        var first = HTTPRequest(url: URL(string: "https://api.test/graphql")!, method: .post)
        first.body = Data(#"{"query":"q","variables":{"first":2}}"#.utf8)
        let bodies = try await Self.bodies(stub.pages(of: first, following: rule))
        #expect(bodies.count == 3)
        #expect(
            stub.requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == [
                #"{"query":"q","variables":{"first":2}}"#,
                #"{"query":"q","variables":{"first":2,"after":"c1"}}"#,
                #"{"query":"q","variables":{"first":2,"after":"c2"}}"#,
            ], "the rest of the body as written, the cursor added or replaced")
    }

    @Test("offsets in the body stop at the total; the same body twice is a loop")
    func bodyOffsetsAndLoops() async throws {
        let stub = StubHTTPClient()
        stub.route(.post, "/search") { request in
            let body =
                try? JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any]
            let offset = body?["offset"] as? Int ?? 0
            return Self.json(
                #"{"items": [\#(offset), \#(offset + 1)], "total": 5, "next": "same"}"#, request)
        }
        var rule = PaginationRule(next: .bodyOffset(field: "/offset", step: 2), items: "/items")
        rule.stopAtTotal = "/total"
        var first = HTTPRequest(url: URL(string: "https://api.test/search")!, method: .post)
        first.body = Data(#"{"offset":0}"#.utf8)
        #expect(
            try await Self.bodies(stub.pages(of: first, following: rule)).count == 3, "2+2+2 ≥ 5")
        let looping = PaginationRule(next: .bodyCursor(pointer: "/next", field: "/cursor"))
        await #expect(throws: PaginationError.self) {
            _ = try await Self.bodies(stub.pages(of: first, following: looping))
        }
        var notJSON = first
        notJSON.body = Data("offset=0".utf8)
        await #expect(throws: PaginationError.self) {
            _ = try await Self.bodies(stub.pages(of: notJSON, following: rule))
        }
    }

    @Test func offsetsStopAtTheFirstEmptyPage() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/rows") { request in
            let offset = Int(Self.query("offset", in: request) ?? "0")!
            return Self.json(offset < 20 ? #"{"rows": [\#(offset)]}"# : #"{"rows": []}"#, request)
        }
        let rule = PaginationRule(
            next: .offset(parameter: "offset", step: 10), stopWhenEmpty: "/rows")
        let bodies = try await Self.bodies(
            stub.pages(of: HTTPRequest(url: URL(string: "https://api.test/rows")!), following: rule)
        )
        #expect(bodies == [#"{"rows": [0]}"#, #"{"rows": [10]}"#, #"{"rows": []}"#])
    }

    @Test func aNextURLOnAnotherOriginGetsNoCredentials() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/a") { Self.json(#"{"next": "https://cdn.test/b"}"#, $0) }
        stub.route(.get, "/b") { Self.json(#"{"next": ""}"#, $0) }
        var first = HTTPRequest(url: URL(string: "https://api.test/a")!)
        first.headers.replaceOrAdd("Authorization", "Bearer sekrit")
        first.headers.replaceOrAdd("Accept", "application/json")
        let bodies = try await Self.bodies(
            stub.pages(of: first, following: PaginationRule(next: .jsonURL("/next"))))
        #expect(bodies.count == 2)
        #expect(stub.requests[0].headers["Authorization"] == "Bearer sekrit")
        #expect(stub.requests[1].url.host == "cdn.test")
        #expect(stub.requests[1].headers["Authorization"] == nil)
        #expect(stub.requests[1].headers["Accept"] == "application/json")
    }

    @Test func aRepeatedCursorIsALoopAndStopsAfterTwoRequests() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/stuck") { Self.json(#"{"next": "same"}"#, $0) }
        let rule = PaginationRule(next: .cursor(pointer: "/next", parameter: "cursor"))
        var seen = 0
        do {
            let first = HTTPRequest(url: URL(string: "https://api.test/stuck")!)
            for try await _ in stub.pages(of: first, following: rule) { seen += 1 }
            Issue.record("a loop must throw")
        } catch let error as PaginationError {
            #expect(error.message.contains("loops"))
        }
        #expect(seen == 1, "the first page is delivered; the second would fetch it again")
        #expect(stub.requests.count == 2)
    }

    @Test func maxPagesEndsThePagesNormally() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/n") { request in
            Self.json(#"{"items": [1]}"#, request)
        }
        let rule = PaginationRule(
            next: .page(parameter: "p", start: 1), stopWhenEmpty: "/items", maxPages: 4)
        let bodies = try await Self.bodies(
            stub.pages(of: HTTPRequest(url: URL(string: "https://api.test/n")!), following: rule))
        #expect(bodies.count == 4)
        #expect(stub.requests.count == 4)
    }

    @Test func anErrorPageIsTheLastPage() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/e") { request in
            Self.query("page", in: request) == nil
                ? Self.json("{}", request, headers: ["Link": #"</e?page=2>; rel="next""#])
                : HTTPResponse(
                    status: 503, headers: ["Link": #"</e?page=3>; rel="next""#], body: Data(),
                    url: request.url, requestHeaders: request.headers)
        }
        var statuses: [Int] = []
        for try await page in stub.pages(of: HTTPRequest(url: URL(string: "https://api.test/e")!)) {
            statuses.append(page.status)
        }
        #expect(statuses == [200, 503])
        #expect(stub.requests.count == 2)
    }

    // MARK: - The API layer, seed style

    struct User: Codable, Sendable, Equatable {
        let id: Int
    }

    struct Page<T: Codable & Sendable>: Codable, Sendable {
        let page: Int
        let results: [T]
    }

    struct ListUsersRequest: APIRequest {
        typealias Response = Page<User>
        let page: Int
        var path: String { "/v1/users" }
        var queryItems: [URLQueryItem]? {
            [
                URLQueryItem(name: "page", value: String(page)),
                URLQueryItem(name: "per_page", value: "2"),
            ]
        }
    }

    @Test func theAPIClientDecodesEachPageByPageNumber() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/v1/users") { request in
            let page = Int(Self.query("page", in: request)!)!
            let users = page <= 2 ? #"[{"id": \#(2 * page - 1)}, {"id": \#(2 * page)}]"# : "[]"
            return Self.json(#"{"page": \#(page), "results": \#(users)}"#, request)
        }
        let client = DefaultAPIClient(
            httpClient: stub, configuration: APIConfiguration(baseURL: Self.base, apiKey: "k"))
        let rule = PaginationRule(
            next: .page(parameter: "page", start: 1), stopWhenEmpty: "/results")
        var users: [User] = []
        for try await page in client.pages(of: ListUsersRequest(page: 1), following: rule) {
            users += page.results
        }
        #expect(users.map(\.id) == [1, 2, 3, 4])
        #expect(stub.requests.count == 3)
        #expect(stub.requests.allSatisfy { $0.headers["Authorization"] == "Bearer k" })
        #expect(
            stub.requests[1].url.query == "page=2&per_page=2", "the page replaces its own parameter"
        )
    }

    @Test func theAPIClientThrowsOnAnUnacceptablePage() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/v1/users") { request in
            Self.query("page", in: request) == "1"
                ? Self.json(#"{"page": 1, "results": [{"id": 1}]}"#, request)
                : HTTPResponse(
                    status: 500, headers: [:], body: Data(), url: request.url,
                    requestHeaders: request.headers)
        }
        let client = DefaultAPIClient(
            httpClient: stub, configuration: APIConfiguration(baseURL: Self.base))
        let rule = PaginationRule(
            next: .page(parameter: "page", start: 1), stopWhenEmpty: "/results")
        var pages = 0
        await #expect(throws: APIError.self) {
            for try await _ in client.pages(of: ListUsersRequest(page: 1), following: rule) {
                pages += 1
            }
        }
        #expect(pages == 1)
    }

    /// A `.query` key went on the first page only: the next page's URL is the server's, and
    /// page 2 went without it on the same origin (trial X). It goes again there, once; a page
    /// on another origin still gets none.
    @Test("a .query key goes on every page of the base URL's origin, once")
    func aQueryKeyGoesOnEveryPage() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/v1/items") { request in
            let page = Int(Self.query("page", in: request) ?? "1")!
            let links = [
                1: #"</v1/items?page=2>; rel="next""#,
                2: #"</v1/items?page=3&api_key=qk>; rel="next""#,
                3: #"<https://other.test/v1/items?page=4>; rel="next""#,
            ]
            return Self.json("[\(page)]", request, headers: links[page].map { ["Link": $0] } ?? [:])
        }
        let client = DefaultAPIClient(
            httpClient: stub,
            configuration: APIConfiguration(
                baseURL: Self.base, auth: .query(name: "api_key", value: "qk")))
        var pages = 0
        for try await _ in client.pages(of: ItemsRequest()) { pages += 1 }
        #expect(pages == 4)
        #expect(
            stub.requests.map { Self.query("api_key", in: $0) } == ["qk", "qk", "qk", nil],
            "\(stub.requests.map(\.url))")
        #expect(stub.requests[2].url.query == "page=3&api_key=qk", "not twice")
    }

    @Test("a link back to the first page is a loop at once, with a query key on every page")
    func aLoopWithAQueryKey() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/v1/items") { request in
            Self.json("[1]", request, headers: ["Link": #"</v1/items>; rel="next""#])
        }
        let client = DefaultAPIClient(
            httpClient: stub,
            configuration: APIConfiguration(
                baseURL: Self.base, auth: .query(name: "api_key", value: "qk")))
        await #expect(throws: PaginationError.self) {
            for try await _ in client.pages(of: ItemsRequest()) {}
        }
        // Trial KK: the first page was fetched twice before the loop was seen.
        #expect(stub.requests.count == 1, "\(stub.requests.map(\.url))")
    }

    struct ItemsRequest: APIRequest {
        typealias Response = [Int]
        var path: String { "/v1/items" }
    }
}
