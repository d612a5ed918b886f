import CourierTestSupport
import Foundation
import Testing

/// Every folder in `Tests/CLITests/BadJobs` is a job that `courier validate` and `courier run`
/// must refuse: `job.json`, and `expect.txt` with the exit code and the lines stderr must
/// contain (`exit: 2`, `stderr: tasks[0].save: escapes outputDir`), and optionally how many
/// lines it has in all (`lines: 1`: one mistake, no errors that follow from it). Add a folder
/// to add a case.
@Suite("Bad job files")
struct BadJobFileTests {
    static let folder = PackagePaths.root.appendingPathComponent("Tests/CLITests/BadJobs")

    static var cases: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    struct Expectation {
        var exit: Int32 = 2
        var stderr: [String] = []
        var lines: Int?

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("exit: ") { exit = Int32(line.dropFirst(6)) ?? -1 }
                if line.hasPrefix("stderr: ") { stderr.append(String(line.dropFirst(8))) }
                if line.hasPrefix("lines: ") { lines = Int(line.dropFirst(7)) ?? -1 }
            }
        }
    }

    /// Outside systemd a `${file:$CREDENTIALS_DIRECTORY/…}` reference cannot be read: one
    /// error each, and no third one judging the unread placeholder as a URL.
    @Test("a credential outside systemd: one error per reference, nothing more")
    func credentialsOutsideSystemd() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try #"""
        {"version": 1, "name": "nightly", "baseURL": "https://api.example.com",
         "auth": {"bearer": "${file:$CREDENTIALS_DIRECTORY/api-token}"},
         "notify": {"ping": "${file:$CREDENTIALS_DIRECTORY/hc-ping-url}"},
         "tasks": [{"id": "a", "path": "/a"}]}
        """#.write(
            to: folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let result = try await CourierBinary.run(
            ["-u", "CREDENTIALS_DIRECTORY", CourierBinary.url.path, "validate", "job.json"],
            executable: URL(fileURLWithPath: "/usr/bin/env"), directory: folder)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(result.stderr)")
        #expect(lines.allSatisfy { $0.contains("CREDENTIALS_DIRECTORY is not set") })
    }

    @Test func thereAreAtLeastTwentyCases() {
        #expect(Self.cases.count >= 20)
    }

    @Test("courier validate refuses it", arguments: cases)
    func validate(name: String) async throws {
        let directory = Self.folder.appendingPathComponent(name)
        let expected = Expectation(
            try String(contentsOf: directory.appendingPathComponent("expect.txt"), encoding: .utf8))
        let result = try await CourierBinary.run(["validate", "job.json"], directory: directory)
        #expect(result.status == expected.exit, "\(result.stderr)")
        for fragment in expected.stderr {
            #expect(
                result.stderr.contains(fragment), "stderr lacks \"\(fragment)\":\n\(result.stderr)")
        }
        if let lines = expected.lines {
            #expect(result.stderr.split(separator: "\n").count == lines, "\(result.stderr)")
        }
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.contains("Fatal error"), "no crash or stack trace")
    }

    @Test("courier run refuses it before sending anything", arguments: cases)
    func run(name: String) async throws {
        let directory = Self.folder.appendingPathComponent(name)
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-bad-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: logs) }
        let result = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", logs.path], directory: directory)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: logs.path),
            "no log, no lock: nothing was started")
    }
}
