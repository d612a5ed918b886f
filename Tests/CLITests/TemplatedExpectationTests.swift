import CourierTestSupport
import Foundation
import Testing

/// `{variables}` in `expect` values and the `{{…}}` escape (issue 28, item 8).
@Suite("templated expectations and brace escapes")
struct TemplatedExpectationTests {
    /// Each task expects its own values back: the query it sent, an id that the server
    /// returns as a number (a whole `"{v}"` matches 2 as well as "2"), a header and a body
    /// text; the GraphQL-like body's `{{name}}` goes on the wire as `{name}`.
    @Test(
        "each task checks its own values; {{name}} is sent as {name}",
        arguments: RunCommandTests.backends)
    func perTask(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "echo-{v}", "method": "POST", "path": "/echo", "query": {"n": "{v}"},
                 "json": {"query": "query { user(id: {v}) {{name}} }"},
                 "foreach": {"v": {"range": [0, 2]}},
                 "expect": {"json": {"/query": "n={v}", "/body": "{\"query\":\"query { user(id: {v}) {{name}} }\"}"},
                            "headers": {"Content-Type": "application/*"}, "bodyContains": "user(id: {v}) {{name}}"}},
                {"id": "item-{v}", "path": "/pages", "query": {"style": "offset", "total": "10", "size": "1", "offset": "{v}"},
                 "foreach": {"v": {"range": [3, 5]}}, "expect": {"json": {"/items/0/id": "{v}", "/items/0": {"id": "{v}"}}}}
                """#)
        let result = try await space.run(backend: backend)
        // `{"id": "{v}"}` is not a whole variable: the object holds a string, the server a number.
        #expect(result.status == 1, "\(result.stderr)")
        for v in 0...2 {
            let line = try #require(try space.attempts("echo-\(v)").last)
            #expect(line["outcome"] as? String == "ok", "\(line)")
            let body = (line["requestBody"] as? [String: Any])?["text"] as? String
            #expect(body == #"{"query":"query { user(id: \#(v)) {name} }"}"#)
        }
        for v in 3...5 {
            let line = try #require(try space.attempts("item-\(v)").last)
            let error = line["error"] as? [String: Any]
            #expect(
                error?["message"] as? String
                    == #"expected /items/0 to be {"id":"\#(v)"}, found {"id":\#(v)}"#, "\(line)")
        }
    }

    @Test("a whole {variable} matches a number of the same text and nothing else")
    func wholeVariable() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "item-{v}", "path": "/pages", "query": {"style": "offset", "total": "10", "size": "1", "offset": "{v}"},
                 "foreach": {"v": {"range": [3, 4]}}, "expect": {"json": {"/items/0/id": "{v}"}}},
                {"id": "off-{v}", "path": "/pages", "query": {"style": "offset", "total": "10", "size": "1", "offset": "{v}"},
                 "foreach": {"v": ["7"]}, "expect": {"json": {"/items/0/id": "{v}1"}}}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try space.attempts("item-3").last?["outcome"] as? String == "ok")
        #expect(try space.attempts("item-4").last?["outcome"] as? String == "ok")
        let error = try space.attempts("off-7").last?["error"] as? [String: Any]
        #expect(error?["message"] as? String == #"expected /items/0/id to be "71", found 7"#)
    }
}
