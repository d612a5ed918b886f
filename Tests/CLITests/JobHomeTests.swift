import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A job's home (docs/job-file.md, "A job's home"): its outputs, state and logs are in one place
/// whatever folder a command runs from, and a job that ran under the old rule (the working
/// folder) is never silently split into two histories.
@Suite("A job's home")
struct JobHomeTests {
    /// A folder with `jobs/night.json`: three saved items and a `flaky` task that fails the
    /// first night (its first request of a fresh key gets a 503, and the job tries once).
    struct Layout {
        let root: URL
        let server: FixtureServer
        let key = "home-\(UUID().uuidString)"

        init(jobExtra: String = "") throws {
            server = try TestServers.fixture()
            root = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-home-\(UUID().uuidString)")
            for folder in ["jobs", "elsewhere"] {
                try FileManager.default.createDirectory(
                    at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            let job = #"""
                {"version": 1, "name": "night", "baseURL": "\#(server.baseURL.absoluteString)",
                 \#(jobExtra) "retry": {"maxAttempts": 1},
                 "tasks": [
                   {"id": "item-{n}", "path": "/bytes", "query": {"n": "{n}00"},
                    "foreach": {"n": {"range": [1, 3]}}, "save": "items/{n}.json"},
                   {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"},
                    "save": "flaky.json"}]}
                """#
            try job.write(to: jobFile, atomically: true, encoding: .utf8)
        }

        var jobFile: URL { root.appendingPathComponent("jobs/night.json") }
        func url(_ path: String) -> URL { root.appendingPathComponent(path) }

        func courier(_ arguments: [String], from folder: URL) async throws
            -> CourierBinary.Result
        {
            try await CourierBinary.run(arguments + ["--no-progress"], directory: folder)
        }

        /// Every file under `folder`, relative path → bytes.
        func files(under folder: String) -> [String: Data] {
            let base = url(folder)
            var files: [String: Data] = [:]
            let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
            while let file = walker?.nextObject() as? URL {
                guard let data = FileManager.default.contents(atPath: file.path) else { continue }
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder)
                if !isFolder.boolValue {
                    files[String(file.path.dropFirst(base.path.count + 1))] = data
                }
            }
            return files
        }

        /// The saved outputs, without `.courier` (state that names runs).
        var outputs: [String: Data] {
            files(under: "jobs/out/night").filter { !$0.key.hasPrefix(".courier") }
        }

        var logNames: [String] { files(under: "jobs/logs/night").keys.sorted() }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test(
        "the same repair from three working folders ends with the same outputs and history",
        arguments: ["job folder", "another folder", "root"])
    func repairFromAnywhere(from place: String) async throws {
        let layout = try Layout()
        defer { layout.remove() }
        // The night, as cron runs it: from the job's folder.
        let night = try await layout.courier(
            ["run", "night.json"], from: layout.url("jobs"))
        #expect(night.status == 1, "\(night.stderr)")
        #expect(
            night.stdout.contains(
                "to repair: courier run \(layout.jobFile.standardizedFileURL.path) --resume"),
            "\(night.stdout)")
        #expect(layout.outputs.keys.sorted() == ["items/1.json", "items/2.json", "items/3.json"])

        let (folder, jobArgument): (URL, String) =
            switch place {
            case "job folder": (layout.url("jobs"), "night.json")
            case "another folder": (layout.url("elsewhere"), "../jobs/night.json")
            default: (URL(fileURLWithPath: "/"), layout.jobFile.path)
            }
        let repair = try await layout.courier(["run", jobArgument, "--resume"], from: folder)
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("(3 done by earlier runs)"), "\(repair.stdout)")
        #expect(repair.stdout.contains("the job's history: every task done"), "\(repair.stdout)")
        #expect(repair.stdout.contains("1 request"), "only flaky is sent again: \(repair.stdout)")
        // One history and one set of outputs, in the home, whichever folder repaired it.
        #expect(layout.logNames.count == 2, "\(layout.logNames)")
        #expect(
            layout.outputs.keys.sorted() == [
                "flaky.json", "items/1.json", "items/2.json", "items/3.json",
            ])
        #expect(
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("logs").path)
                || place == "job folder")
        #expect(!FileManager.default.fileExists(atPath: layout.url("elsewhere/out").path))
        #expect(layout.outputs["items/2.json"]?.count == 200)

        // A clean run of the same job, from its folder, saves the same bytes.
        let clean = try Layout()
        defer { clean.remove() }
        _ = try await clean.courier(["run", "night.json"], from: clean.url("jobs"))
        _ = try await clean.courier(["run", "night.json", "--resume"], from: clean.url("jobs"))
        #expect(clean.outputs.keys.sorted() == layout.outputs.keys.sorted())
        for item in ["items/1.json", "items/2.json", "items/3.json"] {
            #expect(clean.outputs[item] == layout.outputs[item], "\(item) byte for byte")
        }
    }

    @Test("replay --job from another folder saves into the home and joins its history")
    func replayFromElsewhere() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let night = try await layout.courier(["run", "night.json"], from: layout.url("jobs"))
        #expect(night.status == 1)
        let log = try #require(layout.logNames.first)
        let replay = try await layout.courier(
            [
                "replay", "--job", layout.jobFile.path,
                layout.url("jobs/logs/night/\(log)").path,
            ], from: URL(fileURLWithPath: "/"))
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(replay.stdout.contains("the job's history: every task done"), "\(replay.stdout)")
        #expect(layout.outputs["flaky.json"] != nil)
        #expect(layout.logNames.count == 2)
    }

    @Test("show and replay --job take the job file alone, from any folder: its home has the logs")
    func jobFileForItsLogs() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let night = try await layout.courier(["run", "night.json"], from: layout.url("jobs"))
        #expect(night.status == 1)
        let shown = try await CourierBinary.run(
            ["show", "../jobs/night.json", "flaky"], directory: layout.url("elsewhere"))
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("task flaky · attempt 1 · failed"), "\(shown.stdout)")
        let replay = try await layout.courier(
            ["replay", "--job", layout.jobFile.path], from: URL(fileURLWithPath: "/"))
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(replay.stdout.contains("1 task, 1 ok, 0 failed"), "\(replay.stdout)")
        #expect(replay.stdout.contains("the job's history: every task done"), "\(replay.stdout)")
        #expect(layout.outputs["flaky.json"] != nil)
    }

    @Test("home names the folder outputs and logs go to, from any working folder")
    func namedHome() async throws {
        let layout = try Layout(jobExtra: #""home": "../data","#)
        defer { layout.remove() }
        let run = try await layout.courier(
            ["run", layout.jobFile.path], from: URL(fileURLWithPath: "/"))
        #expect(run.status == 1)
        #expect(
            run.stdout.contains("outputs: \(layout.url("data/out/night").path)"), "\(run.stdout)")
        #expect(layout.files(under: "data/out/night").keys.contains("items/1.json"))
        #expect(layout.files(under: "data/logs/night").count == 1)
        #expect(!FileManager.default.fileExists(atPath: layout.url("jobs/out").path))
        // The repair from the job's folder finds the same history.
        let repair = try await layout.courier(
            ["run", "night.json", "--resume"], from: layout.url("jobs"))
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(layout.files(under: "data/out/night").keys.contains("flaky.json"))
    }

    @Test("an empty home is a validation error with its path")
    func emptyHome() async throws {
        let layout = try Layout(jobExtra: #""home": "","#)
        defer { layout.remove() }
        let validate = try await CourierBinary.run(
            ["validate", "night.json"], directory: layout.url("jobs"))
        #expect(validate.status == 2)
        #expect(validate.stderr.contains("night.json:2:"), "\(validate.stderr)")
        #expect(validate.stderr.contains("home: expected a folder"), "\(validate.stderr)")
    }

    @Test(
        "a job that ran under the old rule is refused, with the commands that move its files, and then resumes"
    )
    func oldRule() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        // Before homes: run from `elsewhere`, outputs and logs went to elsewhere/out, logs.
        // The same files, made by a run from the job's folder and moved there.
        let night = try await layout.courier(["run", "night.json"], from: layout.url("jobs"))
        #expect(night.status == 1)
        for folder in ["out", "logs"] {
            try FileManager.default.moveItem(
                at: layout.url("jobs/\(folder)"), to: layout.url("elsewhere/\(folder)"))
        }
        let before = layout.files(under: "elsewhere")
        let refused = try await layout.courier(
            ["run", "../jobs/night.json", "--resume"], from: layout.url("elsewhere"))
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was sent"), "\(refused.stderr)")
        #expect(refused.stderr.contains(#""home": ""#), "\(refused.stderr)")
        #expect(layout.files(under: "elsewhere") == before, "nothing of the old files changed")
        #expect(!FileManager.default.fileExists(atPath: layout.url("jobs/logs").path))
        #expect(!FileManager.default.fileExists(atPath: layout.url("jobs/out").path))
        let hits = try await ServerHits.of(layout.key, on: layout.server)
        #expect(hits.count == 1, "only the night's request of flaky reached the server")

        // The printed commands, run as printed, move them; the resume then finds its history.
        let message = refused.stderr
        let start = try #require(message.range(of: "Either move them there: "))
        let end = try #require(message.range(of: "; or make this folder"))
        let commands = String(message[start.upperBound..<end.lowerBound])
        let moved = try await CourierBinary.run(
            ["-c", commands], executable: URL(fileURLWithPath: "/bin/sh"),
            directory: layout.url("elsewhere"))
        #expect(moved.status == 0, "\(commands): \(moved.stderr)")
        #expect(layout.logNames.count == 1)
        let repair = try await layout.courier(
            ["run", "../jobs/night.json", "--resume"], from: layout.url("elsewhere"))
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("(3 done by earlier runs)"), "\(repair.stdout)")
        #expect(layout.outputs.keys.contains("flaky.json"))
    }

    /// A job of the same name with a file of its own in the working folder (its home) has
    /// logs there that are not this job's: no refusal, and nothing of its moved (trial NN: the
    /// refusal said to move the other job's history).
    @Test("another job of the same name at home in the working folder is not taken for an old home")
    func sameNameOtherJob() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let other = layout.url("elsewhere/night.json")
        try FileManager.default.copyItem(at: layout.jobFile, to: other)
        let first = try await layout.courier(["run", "night.json"], from: layout.url("elsewhere"))
        #expect(first.status != 2, "\(first.stdout)\(first.stderr)")
        let run = try await layout.courier(
            ["run", "../jobs/night.json"], from: layout.url("elsewhere"))
        #expect(run.status != 2, "\(run.stdout)\(run.stderr)")
        #expect(!run.stderr.contains("Either move them"), "\(run.stderr)")
    }

    @Test("a run whose log is not in the home names --log-dir in its repair line")
    func repairLineKeepsLogFolder() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let night = try await layout.courier(
            ["run", "night.json", "--log-dir", "../var log"], from: layout.url("jobs"))
        #expect(night.status == 1)
        #expect(
            night.stdout.contains(
                "to repair: courier run \(layout.jobFile.standardizedFileURL.path) --resume --log-dir '\(layout.url("var log").standardizedFileURL.path)'"
            ),
            "\(night.stdout)")
        // The printed line, run as printed from another folder, repairs the same history.
        let line = try #require(night.stdout.range(of: "to repair: "))
        let command = String(night.stdout[line.upperBound...])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let path = CourierBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"
        let repair = try await CourierBinary.run(
            ["-c", command + " --no-progress"], executable: URL(fileURLWithPath: "/bin/sh"),
            environment: ["PATH": path], directory: URL(fileURLWithPath: "/"))
        #expect(repair.status == 0, "\(command): \(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("the job's history: every task done"), "\(repair.stdout)")
        #expect(layout.outputs["flaky.json"] != nil)
    }

    @Test(
        "a run as the job's user in folders a run as root made: told whose they are, and how to give them back",
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"),
            "needs root and runuser(1), to run courier as another user"))
    func foldersOfAnotherUser() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        // A try as root makes the job's folders, root's.
        let asRoot = try await space.run(backend: "curl")
        #expect(asRoot.status == 0, "\(asRoot.stderr)")
        let asUser = try await CourierBinary.run(
            [
                "-u", "nobody", "--", CourierBinary.url.path, "run", "job.json", "--log-dir",
                space.logs.path, "--no-progress",
            ],
            executable: URL(fileURLWithPath: "/usr/sbin/runuser"), directory: space.folder)
        #expect(asUser.status == 2)
        #expect(asUser.stderr.contains("Permission denied"), "\(asUser.stderr)")
        #expect(
            asUser.stderr.contains("belongs to root, and this run is nobody's")
                && asUser.stderr.contains("`chown -R nobody "), "\(asUser.stderr)")
    }
}
