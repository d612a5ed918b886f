import CourierTestSupport
import Foundation
import Testing

/// `NO_COLOR` (set to anything but empty, no-color.org) and `TERM=dumb` keep every control
/// byte off the terminal: courier draws no progress line then.
@Suite("terminal control")
struct TerminalControlTests {
    /// An environment in which courier draws on a terminal, whatever the test runner's is.
    static let drawing = ["TERM": "xterm", "NO_COLOR": ""]

    /// courier's output on a pseudo-terminal, for a run long enough to draw its progress line.
    static func terminalOutput(_ environment: [String: String]) async throws -> String {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "p{n}", "path": "/slow", "query": {"ms": "300"}, "foreach": {"n": {"range": [1, 4]}}}, {"id": "bad", "path": "/status/500"}"#,
            extra: #""concurrency": 2, "retry": {"maxAttempts": 1},"#)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path], environment: environment,
            directory: space.folder, inTerminal: true)
        let (status, output) = await running.wait(seconds: 300)
        #expect(status == 1, "\(output)")
        #expect(output.contains("courier: e2e: 5 tasks, 4 ok, 1 failed"), "\(output)")
        return output
    }

    @Test func aTerminalGetsTheProgressLine() async throws {
        // The control case: without NO_COLOR the same run does send escapes.
        let output = try await Self.terminalOutput(Self.drawing)
        #expect(output.utf8.contains(0x1B), "\(output.debugDescription)")
    }

    @Test(
        "NO_COLOR or TERM=dumb: no escape byte",
        arguments: [
            ["TERM": "xterm", "NO_COLOR": "1"], ["TERM": "xterm", "NO_COLOR": "yes"],
            ["TERM": "dumb", "NO_COLOR": ""],
        ])
    func noEscapes(environment: [String: String]) async throws {
        let output = try await Self.terminalOutput(environment)
        #expect(!output.utf8.contains(0x1B), "\(output.debugDescription)")
        #expect(!output.contains("req/s"), "no progress line at all")
        #expect(
            output.contains("courier: e2e: task bad"), "failures are still reported, naming the job"
        )
    }
}
