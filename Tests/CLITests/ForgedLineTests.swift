import CourierTestSupport
import Foundation
import Testing

/// A value a server sends (here a captured name, with a newline in it) becomes a task's id;
/// no line courier prints for a person or a shell may be forged by it: the curl script of a
/// replay ran the rest of such a comment as a command (trial K).
@Suite("lines a value cannot forge")
struct ForgedLineTests {
    @Test("a newline in a captured id stays inside its line of the curl script and the report")
    func newlineInACapturedID() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("forged")
        try await SinceCursorTests.put(
            [SinceCursorTests.record(1, "01", name: #"x\ntouch PWNED;#"#)], key: key, on: space)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/store/items", "query": {"key": "\#(key)", "size": "10"},
                 "capture": {"names": {"json": "/items/*/name"}}},
                {"id": "item-{name}", "path": "/status/500", "foreach": {"name": {"capture": "names"}},
                 "retry": {"maxAttempts": 1}}
                """#)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 1, "\(run.stderr)")
        let script = try await CourierBinary.run(
            [
                "replay", "--job", "job.json", "--log-dir", space.logs.path, "--format", "curl",
                "--dry-run",
            ], directory: space.folder)
        #expect(script.stdout.contains("# item-x\\u{A}touch PWNED;#"), "\(script.stdout)")
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e").path], directory: space.folder)
        for output in [script.stdout, report.stdout] {
            let forged = output.split(separator: "\n").filter { $0.hasPrefix("touch") }
            #expect(forged.isEmpty, "\(output)")
        }
    }
}
