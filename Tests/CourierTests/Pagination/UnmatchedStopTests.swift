import Courier
import Foundation
import Testing

/// A `stopWhen` pointer that matches nothing on the first page, which names a next page: the
/// pointer is wrong, and the pages fail rather than end after one (trial HH2). A field that is
/// there and says stop, or a pointer missing on a later page, ends them as before.
@Suite("stop rules that match nothing")
struct UnmatchedStopTests {
    static let first = HTTPRequest(url: URL(string: "https://api.test/items")!)

    /// A page whose body is `body`, with a `Link` to a next page when `next`.
    static func page(_ body: String, next: Bool) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        if next { headers["Link"] = "</items?page=2>; rel=\"next\"" }
        return HTTPResponse(
            status: 200, headers: headers, body: Data(body.utf8), url: first.url)
    }

    static func rule(_ set: (inout PaginationRule) -> Void) -> PaginationRule {
        var rule = PaginationRule(next: .linkHeader("next"))
        set(&rule)
        return rule
    }

    static let rules: [(String, PaginationRule)] = [
        ("false", rule { $0.stopWhenFalse = "/has_more" }),
        ("empty", rule { $0.stopWhenEmpty = "/rows" }),
        ("total", rule { $0.stopAtTotal = "/count" }),
    ]

    @Test("on the first page, with a next page named, it fails", arguments: rules.indices)
    func firstPageFails(index: Int) throws {
        let (name, rule) = Self.rules[index]
        var paginator = Paginator(rule: rule, first: Self.first)
        let error = try #require(throws: PaginationError.self) {
            try paginator.next(after: Self.page("[1, 2, 3]", next: true), to: Self.first)
        }
        #expect(error.message.contains("stopWhen.\(name): the first page has no value at"))
    }

    @Test("without a next page, the first page ends the pages", arguments: rules.indices)
    func noNextEnds(index: Int) throws {
        var paginator = Paginator(rule: Self.rules[index].1, first: Self.first)
        #expect(
            try paginator.next(after: Self.page("[1, 2, 3]", next: false), to: Self.first) == nil)
    }

    @Test("a field that says stop ends the pages, a next page named or not")
    func fieldsThatSayStop() throws {
        for (rule, body) in [
            (Self.rules[0].1, #"{"has_more": false}"#), (Self.rules[0].1, #"{"has_more": null}"#),
            (Self.rules[1].1, #"{"rows": []}"#), (Self.rules[2].1, #"{"count": 0}"#),
        ] {
            var paginator = Paginator(rule: rule, first: Self.first)
            #expect(try paginator.next(after: Self.page(body, next: true), to: Self.first) == nil)
        }
    }

    @Test("after a page where the pointer matched, its absence ends the pages")
    func laterAbsenceEnds() throws {
        var paginator = Paginator(rule: Self.rules[0].1, first: Self.first)
        let second = try #require(
            try paginator.next(after: Self.page(#"{"has_more": true}"#, next: true), to: Self.first)
        )
        #expect(try paginator.next(after: Self.page("{}", next: true), to: second) == nil)
    }
}
