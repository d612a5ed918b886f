import CourierTestSupport
import Foundation
import Testing

/// Pages that move in the request body: a POST search by offset, page or cursor, and GraphQL's
/// `pageInfo { endCursor hasNextPage }`, as a job file writes them; against the fixture on
/// both backends, and against Datasette's GraphQL plugin (PyPI), which nobody here wrote.
@Suite("pagination in the body")
struct BodyPaginationTests {
    static let graphQL =
        "query($after: String) { items(first: 3, after: $after) { nodes { id } pageInfo { endCursor hasNextPage } } }"

    @Test(
        "offset, page and GraphQL cursor in the body, each page's body logged",
        arguments: RunCommandTests.backends)
    func fixture(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "search", "method": "POST", "path": "/search", "query": {"total": "8"},
                 "json": {"filter": {"q": "x"}, "offset": 0, "limit": 3},
                 "paginate": {"next": {"offset": {"body": "/offset", "step": 3}}, "stopWhen": {"false": "/has_more"}},
                 "records": {"from": "/items/*", "to": "search.jsonl", "write": "replace"}},
                {"id": "gql", "method": "POST", "path": "/graphql", "query": {"total": "7"},
                 "json": {"query": "\#(Self.graphQL)", "variables": {"after": null}},
                 "paginate": {"next": {"cursor": {"json": "/data/items/pageInfo/endCursor", "body": "/variables/after"}},
                              "stopWhen": {"false": "/data/items/pageInfo/hasNextPage"}},
                 "records": {"from": "/data/items/nodes/*", "to": "gql.jsonl", "write": "replace"}},
                {"id": "total", "method": "POST", "path": "/search", "query": {"total": "5"},
                 "json": {"page": 1, "size": 2},
                 "paginate": {"next": {"page": {"body": "/page", "start": 1}}, "items": "/items", "stopWhen": {"total": "/total"}},
                 "records": {"from": "/items/*", "to": "total.jsonl", "write": "replace"}}
                """#)
        for run in 1...2 {
            let result = try await space.run(backend: backend)
            #expect(result.status == 0, "run \(run): \(result.stdout)\(result.stderr)")
            #expect(
                result.stdout.contains("3 tasks, 3 ok, 0 failed, 9 requests"), "\(result.stdout)")
            for (name, count) in [("search", 8), ("gql", 7), ("total", 5)] {
                let text = try String(
                    contentsOf: space.folder.appendingPathComponent("out/\(name).jsonl"),
                    encoding: .utf8)
                #expect(
                    text == (0..<count).map { #"{"id":\#($0)}"# + "\n" }.joined(), "\(name)")
            }
        }
        let bodies = try space.attempts("gql").suffix(3).map {
            ($0["requestBody"] as? [String: Any])?["text"] as? String ?? ""
        }
        #expect(
            bodies.map { $0.hasSuffix(#""variables":{"after":null}}"#) } == [true, false, false])
        #expect(bodies.last?.hasSuffix(#""variables":{"after":"5"}}"#) == true, "\(bodies)")
        #expect(
            try space.attempts("search").suffix(3).map {
                (($0["requestBody"] as? [String: Any])?["text"] as? String)
            } == [0, 3, 6].map { #"{"filter":{"q":"x"},"offset":\#($0),"limit":3}"# })
    }

    @Test("GraphQL cursor pagination against Datasette's GraphQL plugin")
    func datasetteGraphQL() async throws {
        let sync = try DatasetteSyncTests.Sync("gql")
        defer { sync.space.remove() }
        try await sync.put((1...7).map { ($0, $0, "r\($0)") })
        let query =
            "query($after: String) { \(sync.table)(first: 3, after: $after, sort: id) { nodes { id name } pageInfo { endCursor hasNextPage } } }"
        try #"""
        {"version": 1, "name": "ds", "baseURL": "\#(sync.base.absoluteString)", "outputDir": "out", "tasks": [
         {"id": "rows", "method": "POST", "path": "/graphql",
          "json": {"query": "\#(query)", "variables": {"after": null}},
          "paginate": {"next": {"cursor": {"json": "/data/\#(sync.table)/pageInfo/endCursor", "body": "/variables/after"}},
                       "stopWhen": {"false": "/data/\#(sync.table)/pageInfo/hasNextPage"}},
          "records": {"from": "/data/\#(sync.table)/nodes/*", "to": "rows.jsonl", "write": "merge", "key": "/id"}}
        ]}
        """#.write(
            to: sync.space.folder.appendingPathComponent("job.json"), atomically: true,
            encoding: .utf8)
        for backend in RunCommandTests.backends {
            let result = try await sync.run(backend)
            #expect(result.status == 0, "\(backend): \(result.stdout)\(result.stderr)")
            #expect(
                result.stdout.contains("1 task, 1 ok, 0 failed, 3 requests"), "\(result.stdout)")
            let rows = try String(
                contentsOf: sync.space.folder.appendingPathComponent("out/rows.jsonl"),
                encoding: .utf8)
            #expect(
                rows == (1...7).map { #"{"id":\#($0),"name":"r\#($0)"}"# + "\n" }.joined(),
                "\(rows)")
        }
    }
}
