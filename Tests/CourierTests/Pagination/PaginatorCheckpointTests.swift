import Courier
import Foundation
import Testing

/// A paginator's checkpoint (what a resumed listing starts from): for every rule, the pages
/// resumed from it ask for the page the uninterrupted pages would have asked for, and go on
/// the same way after it.
@Suite("paginator checkpoints")
struct PaginatorCheckpointTests {
    /// A rule, the first request, and the response of page `n` (which names page n + 1).
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let rule: PaginationRule
        let first: HTTPRequest
        let page: @Sendable (_ n: Int, _ request: HTTPRequest) -> HTTPResponse
        var testDescription: String { name }
    }

    static func response(
        _ body: String, to request: HTTPRequest, headers: HTTPHeaders = [:]
    ) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: headers, body: Data(body.utf8), url: request.url,
            requestHeaders: request.headers)
    }

    static let url = URL(string: "https://api.test/items?key=k%20v&limit=2")!
    static let post: HTTPRequest = {
        var request = HTTPRequest(url: URL(string: "https://api.test/search")!, method: .post)
        request.body = Data(#"{"query": "é", "page": {"after": null, "n": 1}}"#.utf8)
        return request
    }()

    static let cases: [Case] = [
        Case(
            name: "linkHeader", rule: PaginationRule(next: .linkHeader("next")),
            first: HTTPRequest(url: url)
        ) { n, request in
            response(
                "[\(n)]", to: request,
                headers: ["Link": "</items?key=k%20v&limit=2&page=\(n + 1)>; rel=\"next\""])
        },
        Case(
            name: "jsonURL", rule: PaginationRule(next: .jsonURL("/next")),
            first: HTTPRequest(url: url)
        ) { n, request in
            response(#"{"next": "https://api.test/items?p=\#(n + 1)&token=a+b"}"#, to: request)
        },
        Case(
            name: "cursor",
            rule: PaginationRule(next: .cursor(pointer: "/meta/next", parameter: "after")),
            first: HTTPRequest(url: url)
        ) { n, request in
            response(#"{"meta": {"next": "c/\#(n)+=?&"}}"#, to: request)
        },
        Case(
            name: "page", rule: PaginationRule(next: .page(parameter: "page", start: 1)),
            first: HTTPRequest(url: url)
        ) { n, request in response("[\(n)]", to: request) },
        Case(
            name: "offset", rule: PaginationRule(next: .offset(parameter: "offset", step: 2)),
            first: HTTPRequest(url: url)
        ) { n, request in response("[\(n)]", to: request) },
        Case(
            name: "headerParameter",
            rule: PaginationRule(next: .headerParameter(header: "X-Next-Page", parameter: "page")),
            first: HTTPRequest(url: url)
        ) { n, request in response("[\(n)]", to: request, headers: ["X-Next-Page": "\(n + 1)"]) },
        Case(
            name: "bodyCursor",
            rule: PaginationRule(next: .bodyCursor(pointer: "/end", field: "/page/after")),
            first: post
        ) { n, request in response(#"{"end": "e\"\#(n)"}"#, to: request) },
        Case(
            name: "bodyCursor (a number)",
            rule: PaginationRule(next: .bodyCursor(pointer: "/end", field: "/page/after")),
            first: post
        ) { n, request in response(#"{"end": 12345678901234567890\#(n)}"#, to: request) },
        Case(
            name: "bodyPage", rule: PaginationRule(next: .bodyPage(field: "/page/n", start: 1)),
            first: post
        ) { n, request in response("[\(n)]", to: request) },
    ]

    @Test(arguments: cases)
    func resumedPagesAskWhatTheUninterruptedOnesAsk(testCase: Case) throws {
        var whole = Paginator(rule: testCase.rule, first: testCase.first)
        var request = testCase.first
        var checkpoint: Paginator.Checkpoint?
        for n in 1...3 {
            request = try #require(try whole.next(after: testCase.page(n, request), to: request))
            if n == 2 { checkpoint = whole.checkpoint }
        }
        // Resumed after page 2: page 3 is asked for as it was, and page 4 after it.
        let saved = try #require(checkpoint)
        #expect(saved.pages == 2)
        var (resumed, third) = try Paginator.resuming(
            saved, rule: testCase.rule, first: testCase.first)
        var again = Paginator(rule: testCase.rule, first: testCase.first)
        var expected = testCase.first
        for n in 1...2 {
            expected = try #require(try again.next(after: testCase.page(n, expected), to: expected))
        }
        #expect(third.url == expected.url)
        #expect(third.body == expected.body)
        #expect(third.method == expected.method)
        let fourth = try resumed.next(after: testCase.page(3, third), to: third)
        #expect(fourth?.url == request.url)
        #expect(fourth?.body == request.body)
        #expect(resumed.pages == 3)
    }

    @Test func noCheckpointBeforeAPageLedToAnother() throws {
        var paginator = Paginator(
            rule: PaginationRule(next: .linkHeader("next")), first: HTTPRequest(url: Self.url))
        #expect(paginator.checkpoint == nil)
        let last = Self.response("[]", to: HTTPRequest(url: Self.url))
        #expect(try paginator.next(after: last, to: HTTPRequest(url: Self.url)) == nil)
        #expect(paginator.checkpoint == nil)
    }

    @Test func aLinkToAnotherOriginDropsTheCredentialsWhenResumedToo() throws {
        var first = HTTPRequest(url: Self.url)
        first.headers.replaceOrAdd("Authorization", "Bearer secret")
        let checkpoint = Paginator.Checkpoint(
            pages: 1, itemsSeen: 0, step: "https://other.test/items?page=2")
        let (_, request) = try Paginator.resuming(
            checkpoint, rule: PaginationRule(next: .linkHeader("next")), first: first)
        #expect(request.url.absoluteString == "https://other.test/items?page=2")
        #expect(request.headers.values(for: "Authorization").isEmpty)
    }
}
