import CourierTestSupport
import Foundation
import Testing

/// `courier run -` and `courier validate -` read the job from standard input; its relative
/// paths are taken from the working directory, as `outputDir` is.
@Suite("job from standard input")
struct StandardInputJobTests {
    /// Runs the built courier in `directory` with `job` written to its standard input.
    static func run(_ arguments: [String], job: String, in directory: URL) async throws -> (
        status: Int32?, stdout: String, stderr: String
    ) {
        let process = try ChildProcess(
            CourierBinary.url.path, arguments, directory: directory, stdin: .pipe,
            stdout: .pipe, stderr: .pipe)
        let input = try #require(process.input)
        async let stdout = OffPoolRead.all(try #require(process.output))
        async let stderr = OffPoolRead.all(try #require(process.errors))
        try input.write(contentsOf: Data(job.utf8))
        try input.close()
        let status = await process.exit(seconds: 300)
        if status == nil {
            process.send(SIGKILL)
            process.waitUntilExit()
        }
        return (status, try await stdout, try await stderr)
    }

    @Test func runReadsTheJobFromStdinWithPathsFromTheWorkingDirectory() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try "7\n9\n".write(
            to: space.folder.appendingPathComponent("ids.txt"), atomically: true, encoding: .utf8)
        let job = #"""
            {"version": 1, "name": "piped", "baseURL": "\#(space.server.baseURL.absoluteString)",
             "outputDir": "out", "tasks": [{"id": "item-{n}", "path": "/echo",
             "query": {"n": "{n}"}, "foreach": {"n": {"lines": "ids.txt"}}, "save": "items/{n}.json"}]}
            """#
        // Twice: the second run replaces the saved files.
        for _ in 0..<2 {
            let result = try await Self.run(
                ["run", "-", "--log-dir", "logs", "--no-progress"], job: job, in: space.folder)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("courier: piped: 2 tasks, 2 ok"), "\(result.stdout)")
            for id in ["7", "9"] {
                let saved = space.folder.appendingPathComponent("out/items/\(id).json")
                let text = try String(contentsOf: saved, encoding: .utf8)
                #expect(text.contains("\"query\": \"n=\(id)\""), "the saved echo carries n=\(id)")
            }
        }
        let lines = try space.logLines(job: "piped")
        LogContract.check(Array(lines.prefix(4)))
        #expect(lines.first?["jobFile"] as? String == "<stdin>")
    }

    @Test func validateReadsStdinAndNamesItInErrors() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let good = try await Self.run(
            ["validate", "-"],
            job:
                #"{"version": 1, "name": "v", "tasks": [{"id": "a", "url": "http://127.0.0.1/"}]}"#,
            in: space.folder)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout == "<stdin>: ok (1 task)\n")
        let bad = try await Self.run(
            ["validate", "-"],
            job: #"{"version": 1, "tasks": [{"id": "a", "url": "http://127.0.0.1/"}]}"#,
            in: space.folder)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("courier: <stdin>:1:1: name: is required"), "\(bad.stderr)")
    }

    @Test func stdinCanBeNamedOnce() async throws {
        let result = try await CourierBinary.run(["validate", "-", "-"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("can be read once"))
    }
}
