import CourierTestSupport
import Foundation
import Testing

/// The pagination rules of APIs that do not use `Link`: a next URL or page number in a named
/// response header, a cursor taken from the last item, and the guard against a sync that ends
/// after its first full page (issue 28).
@Suite("pagination by header, last-element cursor and the full-page guard")
struct HeaderPaginationTests {
    static let rules: [(style: String, next: String, stop: String, requests: Int)] = [
        ("header", #"{"header": "Next-Page"}"#, "", 4),
        ("gitlab", #"{"headerParam": {"header": "X-Next-Page", "param": "page"}}"#, "", 4),
        // The cursor is the last item's id; only an empty page ends: one request more.
        (
            "after", #"{"cursor": {"json": "/data/-1/id", "param": "after"}}"#,
            #", "stopWhen": {"empty": "/data"}"#, 5
        ),
    ]

    @Test("each rule walks every page on both backends", arguments: 0..<6)
    func rules(index: Int) async throws {
        let (style, next, stop, requests) = Self.rules[index / 2]
        let backend = index % 2 == 0 ? "curl" : "urlsession"
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("hpages-\(style)")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "\#(style)", "total": "10", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": \#(next)\#(stop), "pageSize": 3, "requireNext": true}, "save": "pages/{page}.json"}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(style) \(backend): \(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == requests)
        var ids: [Int] = []
        for page in 1...requests {
            let file = space.folder.appendingPathComponent("out/pages/\(page).json")
            let body =
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            let items = body?["items"] ?? body?["data"]
            ids += (items as? [[String: Int]] ?? []).compactMap { $0["id"] }
        }
        #expect(ids == Array(0..<10), "\(style): every item once, in order")
        LogContract.check(try space.logLines())
    }

    /// Kinto's shape: a bare URL in `Next-Page`, a job that names it with `linkHeader` and no
    /// `pageSize`. One page and exit 0 as before (the rule is the user's), but no longer
    /// without a word: stderr and the log name the rule that follows the field. A GitLab
    /// `X-Next-Page` number gets the `headerParam` rule, a `Link` rel="next" the linkHeader one.
    @Test(
        "a next page the rule does not follow is named, with the rule that would",
        arguments: RunCommandTests.backends, ["header", "gitlab", "link"])
    func unfollowedNextPage(backend: String, style: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("unfollowed")
        let rule = style == "header" ? #"{"linkHeader": "Next-Page"}"# : #"{"linkHeader": "nxt"}"#
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "\#(style)", "total": "10", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": \#(rule)}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
        let expected = [
            "header":
                #"the response has a Next-Page header field (a URL), which {"header": "Next-Page"} follows"#,
            "gitlab":
                #"the response has a X-Next-Page header field (a value), which {"headerParam": {"header": "X-Next-Page", "param": "page"}} (with the parameter the API takes) follows"#,
            "link":
                #"the response has a Link header with rel="next", which {"linkHeader": "next"} follows"#,
        ][style]!
        let line = try #require(try space.attempts("list").last)
        #expect(
            line["warning"] as? String == "page 1 had no next page by the rule, but " + expected,
            "\(line)")
        #expect(result.stderr.contains("may have stopped early"), "\(result.stderr)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        // Under --quiet a night whose tasks all succeeded prints nothing, so cron mails
        // nothing; the warning stays in the log line (a trial was mailed every night).
        let quiet = try await space.run(["--quiet"], backend: backend)
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stdout)\(quiet.stderr)")
        #expect(try space.logLines().filter { $0["warning"] != nil }.count == 2)
    }

    /// The issue's report: `{"linkHeader": "Next-Page"}` validated, fetched page 1 and ended
    /// with exit 0. The full page now warns, in the log and on standard error, and says which
    /// rule reads the field the server sent; `requireNext` fails the task.
    @Test(
        "a full page with no next page warns, and fails with requireNext", arguments: [false, true])
    func fullPageGuard(require: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("hguard")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "header", "total": "10", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": {"linkHeader": "Next-Page"}, "items": "/items", "pageSize": 3, "requireNext": \#(require)}}
                """#)
        let result = try await space.run(backend: require ? "urlsession" : "curl")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
        let line = try #require(try space.attempts("list").last)
        let expected =
            #"page 1 has 3 items, a full page (pageSize 3), but no Link header has rel="Next-Page": the response has a "Next-Page" header field, which {"header": "Next-Page"} follows"#
        if require {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(line["outcome"] as? String == "failed")
            let error = line["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "pagination")
            #expect(error?["message"] as? String == expected + " (requireNext)")
        } else {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(line["outcome"] as? String == "ok")
            #expect(line["warning"] as? String == expected)
            #expect(
                result.stderr.contains("warning: task list may have stopped early: " + expected))
        }
        LogContract.check(try space.logLines())
    }

    @Test("a short last page ends without a warning; maxPages is not a missing next page")
    func shortLastPage() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("hshort")
        try space.writeJob(
            tasks: #"""
                {"id": "short", "path": "/pages", "query": {"style": "header", "total": "7", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": {"header": "Next-Page"}, "items": "/items", "pageSize": 3, "requireNext": true}},
                {"id": "capped", "path": "/pages", "query": {"style": "header", "total": "70", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": {"header": "Next-Page"}, "items": "/items", "pageSize": 3, "requireNext": true, "maxPages": 2}}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
        #expect(try space.attempts("short").count == 3)
        #expect(try space.attempts("capped").count == 2)
        #expect(try space.logLines().allSatisfy { $0["warning"] == nil })
    }
}
