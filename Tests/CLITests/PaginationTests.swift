import CourierTestSupport
import Foundation
import Testing

/// `paginate` against the fixture server's `/pages` API, every style.
@Suite("pagination")
struct PaginationTests {
    static let styles: [(style: String, next: String, requests: Int)] = [
        ("link", #"{"linkHeader": "next"}"#, 4),
        ("json", #"{"json": "/next"}"#, 4),
        ("cursor", #"{"cursor": {"json": "/cursor", "param": "cursor"}}"#, 4),
        // Page numbers and offsets learn the end from an empty page: one request more.
        ("page", #"{"page": {"param": "page", "start": 1}}"#, 5),
        ("offset", #"{"offset": {"param": "offset", "step": 3}}"#, 5),
    ]

    @Test("every style walks all pages, each a log line saved as its own file", arguments: 0..<5)
    func styles(index: Int) async throws {
        let (style, next, requests) = Self.styles[index]
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("pages-\(style)")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "\#(style)", "total": "10", "size": "3", "key": "\#(key)"},
                 "paginate": {"next": \#(next), "stopWhen": {"empty": "/items"}}, "save": "pages/{page}.json"}
                """#)
        let result = try await space.run(backend: index % 2 == 0 ? "curl" : "urlsession")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == requests)
        let lines = try space.attempts("list")
        #expect(lines.map { $0["page"] as? Int } == (1...requests).map { $0 })
        #expect(
            lines.map { $0["outcome"] as? String } == Array(repeating: "page", count: requests - 1)
                + ["ok"])
        var ids: [Int] = []
        for page in 1...requests {
            let file = space.folder.appendingPathComponent("out/pages/\(page).json")
            let body =
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            ids += (body?["items"] as? [[String: Int]] ?? []).compactMap { $0["id"] }
        }
        #expect(ids == Array(0..<10), "every item once, in order")
        LogContract.check(try space.logLines())
        #expect(
            result.stdout.contains("1 task, 1 ok, 0 failed, \(requests) requests"),
            "\(result.stdout)")
    }

    @Test("maxPages ends the task normally")
    func maxPages() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("maxpages")
        try space.writeJob(
            tasks:
                #"{"id": "list", "path": "/pages", "query": {"style": "link", "total": "100", "size": "3", "key": "\#(key)"}, "paginate": {"next": {"linkHeader": "next"}, "maxPages": 2}}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2)
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains("(pages by the Link header's rel=next, at most 2)"),
            "\(plan.stdout)")
    }

    @Test("a server that repeats its last page is a loop: the task fails and says so")
    func loopGuard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("loop")
        try space.writeJob(
            tasks:
                #"{"id": "list", "path": "/pages", "query": {"style": "link", "total": "10", "size": "3", "loop": "1", "key": "\#(key)"}, "paginate": {"next": {"linkHeader": "next"}}}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        #expect(result.stderr.contains("pagination loops"), "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "stopped at once")
        let last = try #require(try space.attempts("list").last)
        #expect((last["error"] as? [String: String])?["kind"] == "pagination")
    }

    @Test("a next page on another host gets no credentials", arguments: RunCommandTests.backends)
    func crossHostNext(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("xhostpages")
        let other = space.server.otherHostURL("").absoluteString
        try space.writeJob(
            tasks:
                #"{"id": "list", "path": "/pages", "query": {"style": "json", "total": "6", "size": "3", "host": "\#(other)", "key": "\#(key)"}, "paginate": {"next": {"json": "/next"}}}"#,
            extra: #""auth": {"bearer": "${env:COURIER_TEST_TOKEN}"},"#)
        let result = try await space.run(
            backend: backend, environment: ["COURIER_TEST_TOKEN": "page-secret"])
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.count == 2)
        #expect(hits.first?.header("Authorization") == "Bearer page-secret")
        #expect(hits.last?.header("Authorization") == nil, "not to another origin")
    }

    @Test("bad paginate keys are exit-2 errors naming the place")
    func badPaginate() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "a", "path": "/pages", "paginate": {"next": {"page": {"param": "p"}}}},
                {"id": "b", "path": "/pages", "paginate": {"next": {"json": "next"}}},
                {"id": "c", "path": "/pages", "paginate": {"next": {"sideways": 1}}},
                {"id": "d", "path": "/pages", "save": "{page}.json"}
                """#)
        let result = try await space.run(["--dry-run"], backend: "curl")
        #expect(result.status == 2)
        for message in [
            "tasks[0].paginate.stopWhen: is required for page numbers and offsets",
            "tasks[1].paginate.next.json: expected a JSON Pointer",
            #"tasks[2].paginate.next: unknown rule "sideways""#,
            #"tasks[3].save: uses {page}, but the task has no foreach variable "page""#,
        ] {
            #expect(result.stderr.contains(message), "\(message) in \(result.stderr)")
        }
    }
}
