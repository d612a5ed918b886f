import CourierTestSupport
import Foundation
import Testing

/// The example jobs in `jobs/` are valid for both `courier validate` and `jobs/schema.json`,
/// and the schema refuses what the parser refuses wherever a schema can say it.
@Suite("jobs/ and the schema")
struct JobFilesTests {
    static let jobs = PackagePaths.root.appendingPathComponent("jobs")
    static let schema = jobs.appendingPathComponent("schema.json")

    static var jobFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: jobs.path)) ?? [])
            .filter { $0.hasSuffix(".json") && $0 != "schema.json" }.sorted()
    }

    /// Runs the schema check with a python3 that has jsonschema.
    static func schemaVerdicts(_ files: [String]) async throws -> [String: String] {
        let script = PackagePaths.fixtures.appendingPathComponent("check_schema.py").path
        for python in ["/usr/bin/python3", "/usr/bin/env"] {
            let arguments =
                (python.hasSuffix("env") ? ["python3"] : []) + [script, schema.path] + files
            let (status, data) = try await ChildProcess.output(python, arguments)
            guard status == 0 else { continue }
            var verdicts: [String: String] = [:]
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                verdicts[String(parts[0])] =
                    parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : ""
            }
            return verdicts
        }
        throw ServerStartError(
            script: "check_schema.py", output: "no python3 with jsonschema; run 'make deps'")
    }

    @Test func thereAreJobsToCheck() {
        #expect(Self.jobFiles.contains("demo.json"))
    }

    @Test("courier validate accepts it", arguments: jobFiles)
    func parserAccepts(file: String) async throws {
        let result = try await CourierBinary.run(
            ["validate", "jobs/\(file)"],
            environment: [
                "API_TOKEN": "dummy", "SYNC_API": "http://127.0.0.1:1",
                "ITEMS_API": "http://127.0.0.1:1", "SYNC_USER": "me",
                "SYNC_PASSWORD": "dummy",
            ],
            directory: PackagePaths.root)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func schemaAcceptsEveryJob() async throws {
        let paths = Self.jobFiles.map { Self.jobs.appendingPathComponent($0).path }
        let verdicts = try await Self.schemaVerdicts(paths)
        for path in paths {
            #expect(verdicts[path] == "ok", "\(path): \(verdicts[path] ?? "no verdict")")
        }
    }

    @Test func schemaRefusesWhatTheParserRefuses() async throws {
        let cases = [
            "unknown-top-level-key", "wrong-version", "missing-name", "concurrency-zero",
            "concurrency-as-string", "unknown-backend", "rate-limit-scope", "retry-key-typo",
            "retry-status-out-of-range", "auth-two-forms", "tasks-empty", "task-key-typo",
            "unknown-method", "lowercase-method", "path-and-url", "no-target",
            "save-escapes-output-dir",
            "save-absolute", "two-bodies", "expect-status-out-of-range", "timeout-zero",
            "header-name-invalid", "auth-oauth2-literal-secret",
            "auth-oauth2-refresh-without-token",
            "auth-oauth2-unknown-grant", "task-auth-oauth2-key-typo",
            "header-name-invalid", "records-merge-without-key", "records-escapes-output-dir",
            "records-bad-pointer", "records-key-outside-merge",
        ]
        let folder = PackagePaths.root.appendingPathComponent("Tests/CLITests/BadJobs")
        let paths = cases.map { folder.appendingPathComponent("\($0)/job.json").path }
        let verdicts = try await Self.schemaVerdicts(paths)
        for path in paths {
            #expect(verdicts[path]?.hasPrefix("invalid") == true, "the schema accepted \(path)")
        }
    }
}
