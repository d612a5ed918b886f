import Courier
import Foundation
import Testing

/// The full-page guard: a listing that ends on a page that looks full warns (or, with
/// `requireNext`, fails) only when the rule never found a next page, the classic one-page
/// sync; after pages the rule followed, a full last page is a total that is a multiple of the
/// page size.
@Suite("full-page guard")
struct FullPageGuardTests {
    static let first = HTTPRequest(url: URL(string: "https://api.test/items?size=3")!)

    /// Three items, with a `Link` to page `next` when there is one.
    static func page(_ request: HTTPRequest, next: Int?) -> HTTPResponse {
        var headers: HTTPHeaders = [:]
        if let next { headers["Link"] = "</items?size=3&page=\(next)>; rel=\"next\"" }
        return HTTPResponse(
            status: 200, headers: headers, body: Data(#"{"items": [1, 2, 3]}"#.utf8),
            url: request.url, requestHeaders: request.headers)
    }

    static func rule(requireNext: Bool) -> PaginationRule {
        PaginationRule(
            next: .linkHeader("next"), items: "/items", pageSize: 3, requireNext: requireNext)
    }

    @Test("a full first page without a next page warns")
    func firstPageWarns() throws {
        var paginator = Paginator(rule: Self.rule(requireNext: false), first: Self.first)
        let next = try paginator.next(after: Self.page(Self.first, next: nil), to: Self.first)
        #expect(next == nil)
        #expect(paginator.missingNext?.contains("page 1 has 3 items, a full page") == true)
    }

    @Test("a full last page after pages the rule followed is an end, not a warning")
    func laterFullPageIsAnEnd() throws {
        var paginator = Paginator(rule: Self.rule(requireNext: false), first: Self.first)
        let second = try #require(
            try paginator.next(after: Self.page(Self.first, next: 2), to: Self.first))
        #expect(try paginator.next(after: Self.page(second, next: nil), to: second) == nil)
        #expect(paginator.missingNext == nil, "\(paginator.missingNext ?? "")")
    }

    @Test("requireNext fails a full last page all the same")
    func requireNextFailsAnyFullPage() throws {
        var paginator = Paginator(rule: Self.rule(requireNext: true), first: Self.first)
        let second = try #require(
            try paginator.next(after: Self.page(Self.first, next: 2), to: Self.first))
        let error = try #require(throws: PaginationError.self) {
            try paginator.next(after: Self.page(second, next: nil), to: second)
        }
        #expect(error.message.contains("page 2 has 3 items, a full page"), "\(error.message)")
    }
}

/// A page whose body the rule must read, and cannot (trial GG).
@Suite("unreadable pages")
struct UnreadablePageTests {
    @Test("a page that is not JSON fails the listing where a rule reads the body")
    func notJSONFails() throws {
        let first = HTTPRequest(url: URL(string: "https://api.test/items")!)
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        for body in ["<html>busy</html>", #"{"items": \#(deep), "next": "/items?p=2"}"#] {
            var paginator = Paginator(rule: PaginationRule(next: .jsonURL("/next")), first: first)
            let page = HTTPResponse(status: 200, body: Data(body.utf8), url: first.url)
            let error = #expect(throws: PaginationError.self) {
                try paginator.next(after: page, to: first)
            }
            #expect(error?.message.contains("is not JSON") == true, "\(body.prefix(20))")
        }
        // A rule that reads no body, and an empty body, end as before.
        var byLink = Paginator(rule: PaginationRule(next: .linkHeader("next")), first: first)
        let text = HTTPResponse(status: 200, body: Data("plain".utf8), url: first.url)
        #expect(try byLink.next(after: text, to: first) == nil)
        var empty = Paginator(rule: PaginationRule(next: .jsonURL("/next")), first: first)
        let none = HTTPResponse(status: 200, body: Data(), url: first.url)
        #expect(try empty.next(after: none, to: first) == nil)
    }
}
