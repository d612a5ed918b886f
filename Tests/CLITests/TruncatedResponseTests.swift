import CourierTestSupport
import Foundation
import Testing

/// A response the server cuts short is a failed attempt of kind `network`, retried like any
/// network failure: the file a good run saved stays byte for byte, and the conditional state
/// keeps the good run's validators, not the cut response's ETag.
@Suite("truncated responses through courier run")
struct TruncatedResponseTests {
    /// Every backend with every cut it can refuse, but for one no code of ours can survive:
    /// FoundationNetworking before Swift 6.4 traps when the connection closes inside the header
    /// block (swift-corelibs-foundation #5285), and the run dies with it. A compressed stream
    /// cut in whole HTTP framing cannot be told from a whole one on URLSession: it is saved, its
    /// line saying `bodyEndUnchecked` (``CompressedBodyRunTests``).
    static let cases: [(String, String)] = RunCommandTests.backends.flatMap { backend in
        ["/cut/headers", "/cut/gzip-chunked", "/cut/gzip-length", "/cut/gzip-length?encoding=br"]
            .compactMap { path in
                #if compiler(<6.4)
                    if backend == "urlsession", path == "/cut/headers" { return nil }
                #endif
                if backend == "urlsession", path.hasPrefix("/cut/gzip") { return nil }
                return (backend, path)
            }
    }

    static func writeJob(_ space: JobWorkspace, path: String, query: String) throws {
        try space.writeJob(
            tasks:
                #"{"id": "a", "path": "\#(path)", "query": {\#(query)}, "conditional": true, "save": "a.json", "retry": {"maxAttempts": 2, "initialDelay": 0.05}}"#
        )
    }

    @Test("a cut response never replaces a saved file nor its ETag", arguments: cases)
    func cutResponseKeepsTheSavedFile(backend: String, path: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, path: "/etag", query: #""v": "good""#)
        let first = try await space.run(backend: backend)
        #expect(first.status == 0, "\(first.stderr)")
        let file = space.folder.appendingPathComponent("out/a.json")
        let good = try Data(contentsOf: file)
        #expect(String(decoding: good, as: UTF8.self).contains("good"))

        // The same save path, now from a server that cuts its answer.
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        let items = parts.dropFirst().flatMap { $0.split(separator: "&") }.map { item in
            let pair = item.split(separator: "=", maxSplits: 1)
            return #""\#(pair[0])": "\#(pair[1])""#
        }
        let query = ([#""run": "2""#] + items).joined(separator: ", ")
        try Self.writeJob(space, path: parts[0], query: query)
        let second = try await space.run(backend: backend)
        #expect(second.status == 1, "\(path): \(second.stderr)")
        #expect(try Data(contentsOf: file) == good, "\(path): the saved file is byte-identical")
        let attempts = try space.attempts("a").filter {
            ($0["url"] as? String)?.contains("/cut/") == true
        }
        #expect(attempts.count == 2, "\(path): retried like any network failure")
        #expect(attempts.last?["outcome"] as? String == "failed")
        for attempt in attempts {
            let error = attempt["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "network", "\(path): \(attempt)")
        }
        let state = space.folder.appendingPathComponent("out/.courier/state")
        let saved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as? [String: Any]
        let entry = (saved?["entries"] as? [String: [String: Any]])?["a.json"]
        #expect(entry?["etag"] as? String == "\"good\"", "\(path): \(saved ?? [:])")
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: file.deletingLastPathComponent().path
            )
            .sorted() == [".courier", "a.json"], "no temporary left")
    }
}

/// A compressed body through `courier run`: read and saved on both backends; where the
/// backend could not check the compressed stream's end (URLSession), the request line says so
/// in `bodyEndUnchecked`, a field and not a failure (docs/log-format.md).
@Suite("compressed bodies through courier run")
struct CompressedBodyRunTests {
    @Test(
        "a br body is saved whole; the line names a coding whose end was not checked",
        arguments: RunCommandTests.backends)
    func compressedBodySaved(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "a", "path": "/cut/gzip-length", "query": {"whole": "1", "encoding": "br"}, "save": "a.json"}"#
        )
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let saved = try Data(contentsOf: space.folder.appendingPathComponent("out/a.json"))
        #expect((try JSONSerialization.jsonObject(with: saved) as? [Any])?.count == 2000)
        let line = try #require(try space.attempts("a").last)
        #expect(line["outcome"] as? String == "ok")
        #expect(line["bytesReceived"] as? Int == saved.count, "the decoded bytes")
        #expect(line["bodyEndUnchecked"] as? String == (backend == "urlsession" ? "br" : nil))
    }

    /// The limit, stated: URLSession cannot tell a cut stream from a whole one, so the run
    /// takes it; the line says that its end was not checked. (curl refuses it: above.)
    @Test("a cut gzip stream on URLSession is taken, and its line says its end was not checked")
    func cutStreamOnURLSession() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/cut/gzip-length", "save": "a.json"}"#)
        let result = try await space.run(backend: "urlsession")
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(try space.attempts("a").last)
        #expect(line["outcome"] as? String == "ok")
        #expect(line["bodyEndUnchecked"] as? String == "gzip")
    }
}
