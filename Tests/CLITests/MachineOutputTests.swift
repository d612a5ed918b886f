import CourierTestSupport
import Foundation
import Testing

/// `--json` on `run` and `validate`: one JSON object with the documented fields, for scripts.
@Suite("machine-readable output")
struct MachineOutputTests {
    static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    @Test func runJSONIsOneObjectWithTheDocumentedFields() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "ok{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 3]}}}, {"id": "missing", "path": "/status/404"}"#
        )
        // Twice: a second run of the job could differ (its history, its outputs).
        for _ in 0..<2 {
            let result = try await space.run(["--json"], backend: "curl")
            #expect(result.status == 1, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 1, "one object and nothing else on stdout: \(result.stdout)")
            let summary = try #require(Self.object(result.stdout), "\(result.stdout)")
            for field in [
                "job", "shard", "tasks", "requests", "durationMs", "exitCode", "interrupted",
                "stoppedBy", "log", "logIncomplete", "missing",
            ] {
                #expect(summary.index(forKey: field) != nil, "the summary lacks \(field)")
            }
            #expect(summary["job"] as? String == "e2e")
            #expect(summary["shard"] is NSNull)
            let tasks = try #require(summary["tasks"] as? [String: Int])
            #expect(tasks["total"] == 4)
            #expect(tasks["ok"] == 3)
            #expect(tasks["failed"] == 1)
            #expect(tasks["notRun"] == 0)
            #expect(summary["requests"] as? Int == 4)
            #expect(summary["exitCode"] as? Int == 1)
            #expect(summary["interrupted"] as? Bool == false)
            #expect(summary["stoppedBy"] is NSNull)
            let log = try #require(summary["log"] as? String)
            #expect(
                FileManager.default.fileExists(
                    atPath: log.hasPrefix("/") ? log : space.folder.appendingPathComponent(log).path
                ),
                "the log it names exists: \(log)")
            #expect(!result.stdout.contains("courier: e2e:"), "no human summary line")
            // `courier run --help` names every field the object has (it once left two out).
            let help = try await CourierBinary.run(["run", "--help"]).stdout
            for field in Array(summary.keys) + Array(tasks.keys) {
                #expect(help.contains("\"\(field)\""), "run --help does not name \(field)")
            }
        }
    }

    @Test func runJSONGoesToStderrWhenTheLogIsOnStdout() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "one", "path": "/status/200"}"#)
        let result = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "-", "--json", "--no-progress"],
            directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        for line in result.stdout.split(separator: "\n") {
            let object = try #require(Self.object(String(line)))
            #expect(object["event"] is String, "stdout holds only log lines")
        }
        let summary = try #require(Self.object(result.stderr), "\(result.stderr)")
        #expect(summary["log"] is NSNull)
        #expect((summary["tasks"] as? [String: Int])?["ok"] == 1)
    }

    /// `courier run … --json | jq` must always read a value: a refusal prints its reasons as
    /// one object (it printed nothing before).
    @Test("a refused run prints its reasons as JSON: a bad job (2), a held lock (3)")
    func runJSONOfARefusal() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/status/200", "retry": {"maxAttempts": 0}}"#)
        let bad = try await space.run(["--json"], backend: "curl")
        #expect(bad.status == 2)
        let refusal = try #require(
            try JSONSerialization.jsonObject(with: Data(bad.stdout.utf8)) as? [String: Any],
            "\(bad.stdout)")
        #expect(refusal["exitCode"] as? Int == 2 && refusal["refused"] as? String == "usage")
        #expect(refusal["jobFile"] as? String == "job.json")
        let errors = try #require(refusal["errors"] as? [String])
        #expect(errors.contains { $0.contains("maxAttempts") }, "\(errors)")

        try space.writeJob(tasks: #"{"id": "a", "path": "/status/200"}"#)
        let out = space.folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let holder = try FileLockHolder(path: out.path, folder: true)
        defer { holder.release() }
        let locked = try await space.run(["--json"], backend: "curl")
        #expect(locked.status == 3)
        let lockRefusal = try #require(
            try JSONSerialization.jsonObject(with: Data(locked.stdout.utf8)) as? [String: Any],
            "\(locked.stdout)")
        #expect(
            lockRefusal["exitCode"] as? Int == 3 && lockRefusal["refused"] as? String == "locked")
        #expect(
            (lockRefusal["errors"] as? [String])?.contains { $0.contains("holds its lock") }
                == true,
            "\(lockRefusal)")
    }

    @Test func validateJSONListsOkTasksAndErrors() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "u{n}", "path": "/u/{n}", "foreach": {"n": {"range": [1, 5]}}}"#)
        try
            #"{"version": 1, "name": "bad", "tasks": [{"id": "a", "url": "http://127.0.0.1/", "bogus": 1}]}"#
            .write(
                to: space.folder.appendingPathComponent("bad.json"), atomically: true,
                encoding: .utf8)
        let good = try await CourierBinary.run(
            ["validate", "--json", "job.json"], directory: space.folder)
        #expect(good.status == 0)
        let okObject = try #require(Self.object(good.stdout), "\(good.stdout)")
        #expect(okObject["ok"] as? Bool == true)
        #expect(okObject["tasks"] as? Int == 5)
        #expect((okObject["errors"] as? [Any])?.isEmpty == true)

        let bad = try await CourierBinary.run(
            ["validate", "job.json", "bad.json", "--json"], directory: space.folder)
        #expect(bad.status == 2)
        #expect(bad.stderr.isEmpty, "the errors are in the object: \(bad.stderr)")
        let object = try #require(Self.object(bad.stdout), "\(bad.stdout)")
        #expect(object["ok"] as? Bool == false)
        #expect(object["tasks"] as? Int == 5)
        let errors = try #require(object["errors"] as? [[String: Any]])
        let bogus = try #require(errors.first { ($0["path"] as? String) == "tasks[0].bogus" })
        #expect(bogus["file"] as? String == "bad.json")
        #expect((bogus["message"] as? String)?.contains("unknown key \"bogus\"") == true)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.map { $0["ok"] as? Bool } == [true, false])
    }
}
