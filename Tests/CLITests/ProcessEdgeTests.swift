import CourierTestSupport
import Foundation
import Testing

/// How courier behaves at the edges of a Unix process: pipes that close early, job files that
/// are FIFOs, and file errors said in words.
@Suite("process edges")
struct ProcessEdgeTests {
    /// Runs a shell command line in `folder`; returns its standard output and error.
    static func shell(_ command: String, in folder: URL) async throws -> CourierBinary.Result {
        try await CourierBinary.run(
            ["-c", command], executable: URL(fileURLWithPath: "/bin/bash"), directory: folder)
    }

    @Test("a reader that hangs up early does not kill the run")
    func closedPipe() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "t{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 20000]}}}"#)
        let binary = CourierBinary.url.path
        let plan = try await Self.shell(
            "'\(binary)' run job.json --dry-run | head -1; echo \"status=${PIPESTATUS[0]}\"",
            in: space.folder)
        #expect(plan.stdout.contains("status=0"), "\(plan.stdout) \(plan.stderr)")
        try space.writeJob(
            tasks: #"{"id": "t{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 30]}}}"#)
        let run = try await Self.shell(
            "'\(binary)' run job.json --log-dir '\(space.logs.path)' 2>&1 | true; echo \"status=${PIPESTATUS[0]}\"",
            in: space.folder)
        #expect(run.stdout.contains("status=0"), "\(run.stdout) \(run.stderr)")
        #expect(try space.logLines().last?["event"] as? String == "run.end")
    }

    @Test("a job file that is a FIFO is read like a file")
    func fifoJobFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/status/200"}"#)
        let result = try await Self.shell(
            "mkfifo pipe.json && (cat job.json > pipe.json &) && '\(CourierBinary.url.path)' run pipe.json --dry-run",
            in: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 task"), "\(result.stdout)")
    }

    /// A `lines` file that is a FIFO is refused, with no writer on it (trial EEE: `validate`
    /// waited on it for ever; it is read more than once, so a writer would not do either).
    @Test(
        "a foreach lines file that is a FIFO is refused, not waited on", .timeLimit(.minutes(5)))
    func fifoLinesFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "t{n}", "path": "/status/200", "foreach": {"n": {"lines": "ids"}}}"#)
        #expect(mkfifo(space.folder.appendingPathComponent("ids").path, 0o600) == 0)
        for command in [["validate", "job.json"], ["run", "job.json", "--dry-run"]] {
            let result = try await CourierBinary.run(command, directory: space.folder)
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains("\"ids\" is a FIFO, not a file of lines"),
                "\(command): \(result.stderr)")
        }
    }

    @Test("file errors say what and where, in words")
    func fileErrorsInWords() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try FileManager.default.createDirectory(
            at: space.folder.appendingPathComponent("folder.json"),
            withIntermediateDirectories: true)
        let folder = try await CourierBinary.run(
            ["run", "folder.json", "--dry-run"], directory: space.folder)
        #expect(folder.status == 2)
        #expect(folder.stderr.contains("folder.json: cannot read"), "\(folder.stderr)")
        #expect(folder.stderr.contains("Is a directory"), "\(folder.stderr)")
        try "x".write(
            to: space.folder.appendingPathComponent("blocker"), atomically: true, encoding: .utf8)
        try space.writeJob(tasks: #"{"id": "a", "path": "/status/200"}"#)
        let logs = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "blocker/logs", "--no-progress"],
            directory: space.folder)
        #expect(logs.status != 0)
        #expect(logs.stderr.contains("blocker"), "\(logs.stderr)")
        for output in [folder.stderr, logs.stderr] {
            #expect(!output.contains("NSCocoaErrorDomain") && !output.contains("Code="))
        }
    }
}

/// A job of a billion tasks validates at once, and its dry run streams.
@Suite("huge ranges")
struct HugeRangeTests {
    @Test("validate and --dry-run | head -2 of 10^9 tasks return at once")
    func billionTasks() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "t{n}", "path": "/items/{n}", "foreach": {"n": {"range": [1, 1000000000]}}}"#
        )
        let valid = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(valid.stdout.contains("ok (1000000000 tasks)"), "\(valid.stdout)\(valid.stderr)")
        let plan = try await ProcessEdgeTests.shell(
            "timeout 60 '\(CourierBinary.url.path)' run job.json --dry-run | head -2; echo \"status=${PIPESTATUS[0]}\"",
            in: space.folder)
        #expect(plan.stdout.hasPrefix("t1\tGET "), "\(plan.stdout)")
        #expect(plan.stdout.contains("status=0"), "stopped when head went away: \(plan.stdout)")
    }

    @Test("a dry run shows control characters from a lines file escaped, never raw")
    func controlCharactersInThePlan() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Data("plain\nbell\u{07}\nclear\u{1B}[2J\n".utf8).write(
            to: space.folder.appendingPathComponent("ids.txt"))
        try space.writeJob(
            tasks: #"{"id": "t-{x}", "path": "/echo", "foreach": {"x": {"lines": "ids.txt"}}}"#)
        let plan = try await CourierBinary.run(
            ["run", "job.json", "--dry-run"], directory: space.folder)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(!plan.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(plan.stdout.contains(#"t-clear\u{1B}[2J"#), "\(plan.stdout)")
        #expect(plan.stdout.contains(#"t-bell\u{7}"#))
    }

    @Test("a job file over 16 MiB, or endless, is refused at once with advice, in bounded memory")
    func oversizedJobFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // A 20 MiB string, as a job file might carry by mistake (a pasted export).
        let big = space.folder.appendingPathComponent("big.json")
        let padding = String(repeating: "x", count: 20 << 20)
        try #"{"version": 1, "name": "big", "description": "\#(padding)", "tasks": []}"#
            .write(to: big, atomically: true, encoding: .utf8)
        // And one that never ends.
        let endless = space.folder.appendingPathComponent("endless.json")
        try FileManager.default.createSymbolicLink(
            at: endless, withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
        for name in ["big.json", "endless.json"] {
            let result = try await CourierBinary.run(["validate", name], directory: space.folder)
            #expect(result.status == 2, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("larger than 16 MiB, the most a job file may be"))
            #expect(result.stderr.contains("lines"), "says where the data belongs")
        }
    }
}
