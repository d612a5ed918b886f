import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Saved outputs survive re-runs: each run replaces a saved file whole, and never deletes it.
@Suite("saved outputs across runs")
struct SavedOutputTests {
    @Test("three runs in a row each save the file", arguments: RunCommandTests.backends)
    func threeRunsInARow(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let saved = space.folder.appendingPathComponent("out/a.json")
        for run in 1...3 {
            try space.writeJob(
                tasks:
                    #"{"id": "a", "path": "/echo", "query": {"run": "r\#(run)"}, "save": "a.json"}"#
            )
            let result = try await space.run(backend: backend)
            #expect(result.status == 0, "run \(run): \(result.stderr)")
            let text = try String(contentsOf: saved, encoding: .utf8)
            #expect(text.contains(#""query": "run=r\#(run)""#), "run \(run) saved its response")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: saved.deletingLastPathComponent().path)
                == ["a.json"], "no temporary files left")
    }

    @Test("many tasks saving to one path leave one whole response")
    func concurrentSavesToOnePath() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // Validation refuses a path that plainly leaves out a changing variable; one made to
        // meet anyway (an empty value zipped in) is still saved whole.
        let blanks = Array(repeating: #""""#, count: 40).joined(separator: ", ")
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/bytes", "query": {"n": "{n}000"}, "foreach": {"n": {"range": [1, 40]}, "x": [\#(blanks)]}, "zip": true, "save": "same{x}.bin"}"#,
            extra: #""concurrency": 8,"#)
        for _ in 1...2 {
            let result = try await space.run(backend: "curl")
            #expect(result.status == 0, "\(result.stderr)")
        }
        let saved = try Data(contentsOf: space.folder.appendingPathComponent("out/same.bin"))
        #expect(saved.count % 1000 == 0 && (1...40).contains(saved.count / 1000))
        #expect(BytePattern.matches(saved), "whole")
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: space.folder.appendingPathComponent("out").path) == ["same.bin"])
    }

    @Test("a read-only saved file is replaced and stays read-only")
    func readOnlyExistingFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"run": "one"}, "save": "a.json"}"#)
        #expect(try await space.run(backend: "curl").status == 0)
        let saved = space.folder.appendingPathComponent("out/a.json")
        #expect(chmod(saved.path, 0o444) == 0)
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"run": "two"}, "save": "a.json"}"#)
        let second = try await space.run(backend: "urlsession")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try String(contentsOf: saved, encoding: .utf8).contains("run=two"))
        let mode = try FileManager.default.attributesOfItem(atPath: saved.path)[.posixPermissions]
        #expect((mode as? Int) == 0o444)
    }
}

/// A 304 has no body: the saved output stays as it is.
@Suite("not modified")
struct NotModifiedTests {
    @Test("a 304 never overwrites a saved output", arguments: RunCommandTests.backends)
    func notModifiedKeepsTheFile(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "same", "path": "/status/304", "headers": {"If-None-Match": "\"v1\""}, "expect": {"status": [200, 304]}, "save": "same.json"}"#
        )
        let saved = space.folder.appendingPathComponent("out/same.json")
        try FileManager.default.createDirectory(
            at: saved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "the first run's body".write(to: saved, atomically: true, encoding: .utf8)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOf: saved, encoding: .utf8) == "the first run's body")
        let line = try #require(try space.attempts("same").first)
        #expect(line["notModified"] as? Bool == true)
        #expect(line["savedTo"] == nil)
    }

    /// A new saved file and folder take the umask as `curl -o` and `mkdir -p` do (`0666` and
    /// `0777` less it), so a group-shared output folder stays group-writable; a file saved
    /// again keeps its permission bits but never a set-user-ID, set-group-ID or sticky bit.
    @Test(
        "saves honour the umask, and new content never inherits set-user-ID",
        arguments: RunCommandTests.backends)
    func umaskAndPrivilegeBits(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"run": "one"}, "save": "sub/a.json"}"#)
        func run() async throws {
            let result = try await CourierBinary.run(
                [
                    "-c",
                    "umask 002 && exec \"$0\" run job.json --log-dir logs --no-progress --backend \"$1\"",
                    CourierBinary.url.path, backend,
                ], executable: URL(fileURLWithPath: "/bin/sh"), directory: space.folder)
            #expect(result.status == 0, "\(result.stderr)")
        }
        func mode(_ path: String) throws -> Int? {
            try FileManager.default.attributesOfItem(
                atPath: space.folder.appendingPathComponent(path).path)[.posixPermissions] as? Int
        }
        try await run()
        #expect(try mode("out/sub/a.json") == 0o664)
        #expect(try mode("out/sub") == 0o775)
        #expect(chmod(space.folder.appendingPathComponent("out/sub/a.json").path, 0o4755) == 0)
        try await run()
        #expect(try mode("out/sub/a.json") == 0o755, "the bits kept, set-user-ID dropped")
    }
}
