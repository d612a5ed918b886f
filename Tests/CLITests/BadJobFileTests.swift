import CourierTestSupport
import Foundation
import Testing

/// Every folder in `Tests/CLITests/BadJobs` is a job that `courier validate` and `courier run`
/// must refuse: `job.json`, and `expect.txt` with the exit code and the lines stderr must
/// contain (`exit: 2`, `stderr: tasks[0].save: escapes outputDir`). Add a folder to add a case.
@Suite("Bad job files")
struct BadJobFileTests {
    static let folder = PackagePaths.root.appendingPathComponent("Tests/CLITests/BadJobs")

    static var cases: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    struct Expectation {
        var exit: Int32 = 2
        var stderr: [String] = []

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("exit: ") { exit = Int32(line.dropFirst(6)) ?? -1 }
                if line.hasPrefix("stderr: ") { stderr.append(String(line.dropFirst(8))) }
            }
        }
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
