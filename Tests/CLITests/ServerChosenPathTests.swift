import CourierTestSupport
import Foundation
import Testing

/// Paths that values fill in (`save`, `records.to`), where a server chose the values: they
/// stay out of courier's own folder, and no secret becomes a file's name (trial GG).
@Suite("server-chosen paths")
struct ServerChosenPathTests {
    /// A server whose ids were `.courier/state` and `.courier/lock` had the children's saves
    /// replace courier's own files: every later run stopped at once ("not a state file
    /// courier wrote"), a lasting denial of service the server planted.
    @Test("a value that points a save into .courier fails its task; courier's files stand")
    func noSaveIntoCouriersFolder() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("into-courier")
        try RecordsTests.set(
            key, [#"{"id": ".courier/state"}"#, #"{"id": "./.courier/lock"}"#, #"{"id": "fine"}"#],
            on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/list", "query": {"key": "\#(key)"},
                 "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item {id}", "path": "/echo", "query": {"id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "{id}"},
                {"id": "kept", "path": "/echo", "query": {"k": "1"}, "conditional": true,
                 "save": "kept.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stdout) \(first.stderr)")
        #expect(
            first.stderr.contains("may not be inside .courier, which is courier's own folder"),
            "\(first.stderr)")
        let out = space.folder.appendingPathComponent("out")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("fine").path))
        let state = try? String(
            contentsOf: out.appendingPathComponent(".courier/state"), encoding: .utf8)
        #expect(state.map { !$0.contains("\"id\"") } ?? true, "courier's state is its own")
        // The next night starts as any: nothing refused it.
        let second = try await space.run(backend: "urlsession")
        #expect(second.status == 1, "\(second.stdout) \(second.stderr)")
        #expect(!second.stderr.contains("not a state file"), "\(second.stderr)")
        // Written in the job file, it is refused before anything is sent.
        try space.writeJob(tasks: #"{"id": "s", "path": "/echo", "save": ".courier/state"}"#)
        let refused = try await space.run(backend: "curl")
        #expect(refused.status == 2 && refused.stderr.contains("may not be inside .courier"))
    }

    /// A server that echoed the bearer token as an id named a saved file after it; the log's
    /// `savedTo` had it redacted, the file system did not.
    @Test("a secret that a value puts in a save path fails the task; no file is named after it")
    func noSecretInAFileName() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let token = "tok-\(UUID().uuidString)"
        try "\(token)\nplain\n".write(
            to: space.folder.appendingPathComponent("values.txt"), atomically: true,
            encoding: .utf8)
        try space.writeJob(
            tasks: #"""
                {"id": "item-{n}", "path": "/echo", "zip": true,
                 "foreach": {"n": {"range": [1, 2]}, "v": {"lines": "values.txt"}},
                 "save": "items/{v}.json"}
                """#, extra: #""auth": {"bearer": "${env:TOKEN}"},"#)
        let run = try await space.run(backend: "curl", environment: ["TOKEN": token])
        #expect(run.status == 2, "\(run.stdout) \(run.stderr)")
        #expect(
            run.stderr.contains("the path would hold a secret (a value put it there)"),
            "\(run.stderr)")
        #expect(!run.stderr.contains(token) && !run.stdout.contains(token))
        let items = space.folder.appendingPathComponent("out/items")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: items.path)) ?? []
        #expect(!names.contains { $0.contains(token) }, "\(names)")
    }

    /// Trial III: a listing's answer named another host (`{"base": "http://127.0.0.1:PORT"}`)
    /// and `"path": "{+base}/echo"` took the job's bearer token there. A value that makes a
    /// path an absolute URL fails its task, and nothing is sent.
    @Test("a value that makes a path an absolute URL fails its task; the token stays home")
    func noAbsoluteURLFromAValue() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("elsewhere")
        let elsewhere = space.server.url("/hits").absoluteString.replacingOccurrences(
            of: "127.0.0.1", with: "localhost"
        ).replacingOccurrences(of: "/hits", with: "")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/json", "query": {"v": "{\"base\": \"\#(elsewhere)\"}"},
                 "capture": {"base": {"json": "/base"}}},
                {"id": "files", "path": "{+base}/echo", "query": {"key": "\#(key)"}}
                """#, extra: #""retry": {"maxAttempts": 1}, "auth": {"bearer": "${env:TOKEN}"},"#)
        let run = try await space.run(backend: "curl", environment: ["TOKEN": "tok-elsewhere"])
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        #expect(
            run.stderr.contains("a value made the path an absolute URL (\"http:…\")"),
            "\(run.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing sent")
    }

    /// Trial LLL: a literal `o/x.json` beside a fan-out's `o/{i}.json` whose capture yielded
    /// `x`: validation cannot see it, and the run said `4 ok` with one answer lost. The second
    /// task to save a file another task of the run saved fails, and the first's answer stays.
    @Test("a value that names a file another task of the run saved fails its task")
    func noTwoTasksSaveOneFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/json", "query": {"v": "[\"x\", \"y\"]"},
                 "capture": {"ids": {"json": "/*"}}},
                {"id": "c", "path": "/json", "query": {"v": "{\"from\": \"c\"}"}, "save": "o/x.json"},
                {"id": "i-{i}", "path": "/json", "query": {"v": "{\"from\": \"{i}\"}"},
                 "foreach": {"i": {"capture": "ids"}}, "save": "o/{i}.json"}
                """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("4 tasks, 3 ok, 1 failed"), "\(run.stdout)")
        #expect(
            run.stderr.contains(
                "another task of this run or of the night it completes saved that file"),
            "\(run.stderr)")
        let saved = try String(
            contentsOf: space.folder.appendingPathComponent("out/o/x.json"), encoding: .utf8)
        let failedC = run.stderr.contains("task c failed")
        #expect(saved.contains(failedC ? #""from": "x""# : #""from": "c""#), "\(saved)")
    }

    /// Trial WWW: a literal save through a link inside `outputDir` (`lk/x.json`, `lk` a link
    /// to `o`) beside a fan-out's `o/{i}.json`: the check read the paths as written, and one
    /// answer replaced the other, exit 0, in one run and across a resume.
    @Test("two spellings of one file through a link inside outputDir are one file")
    func noTwoTasksSaveOneFileThroughALink() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let out = space.folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(
            at: out.appendingPathComponent("o"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: out.appendingPathComponent("lk").path, withDestinationPath: "o")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/json", "query": {"v": "[\"x\", \"y\"]"},
                 "capture": {"ids": {"json": "/*"}}},
                {"id": "i-{i}", "path": "/json", "query": {"v": "{\"from\": \"{i}\"}"},
                 "foreach": {"i": {"capture": "ids"}}, "save": "o/{i}.json"},
                {"id": "c", "path": "/json", "query": {"v": "{\"from\": \"c\"}"}, "save": "lk/x.json"}
                """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        #expect(
            run.stderr.contains("of the night it completes saved that file"), "\(run.stderr)")
        let saved = try String(
            contentsOf: out.appendingPathComponent("o/x.json"), encoding: .utf8)
        #expect(saved.contains(#""from": "x""#), "the fan-out's answer stays: \(saved)")
    }

    /// Trial MMM: the same two tasks, one in the night and one in its resume: the resume's
    /// fan-out child replaced the file the night's literal save wrote, exit 0. A repair's
    /// tasks are the night's: the child fails, and the night's answer stays.
    @Test("a resume's task may not replace a file a task of the night saved")
    func noResumeReplacesTheNightsSave() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/json", "query": {"v": "${env-public:LIST}"},
                 "capture": {"ids": {"json": "/*"}}},
                {"id": "c", "path": "/json", "query": {"v": "{\"from\": \"c\"}"}, "save": "o/x.json"},
                {"id": "i-{i}", "path": "/json", "query": {"v": "{\"from\": \"{i}\"}"},
                 "foreach": {"i": {"capture": "ids"}}, "save": "o/{i}.json"}
                """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        // The night: the listing's answer is no JSON, so its fan-out is skipped.
        let night = try await space.run(backend: "curl", environment: ["LIST": "nope"])
        #expect(night.status == 1, "\(night.stdout) \(night.stderr)")
        let file = space.folder.appendingPathComponent("out/o/x.json")
        #expect(try String(contentsOf: file, encoding: .utf8).contains(#""from": "c""#))
        for _ in 1...2 {
            let resume = try await space.run(
                ["--resume"], backend: "curl", environment: ["LIST": #"["x", "y"]"#])
            #expect(resume.status == 1, "\(resume.stdout) \(resume.stderr)")
            #expect(
                resume.stderr.contains(
                    "another task of this run or of the night it completes saved that file"),
                "\(resume.stderr)")
            let saved = try String(contentsOf: file, encoding: .utf8)
            #expect(saved.contains(#""from": "c""#), "\(saved)")
            let other = space.folder.appendingPathComponent("out/o/y.json")
            #expect(FileManager.default.fileExists(atPath: other.path))
        }
    }
}

/// Trial MMM: a save through a link to the job's folder (`lk -> .`, with `"outputDir": "."`)
/// replaced the job file, and one through it into `logs/JOB/` wrote into its history, though
/// the paths as written named neither (``OwnFiles`` reads them as written).
@Suite("saves through links to the job's own files")
struct OwnFilesThroughLinksTests {
    @Test("a save through a link to the job file or its log folder fails; both stand")
    func noSaveThroughALinkToOwnFiles() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try FileManager.default.createSymbolicLink(
            atPath: space.folder.appendingPathComponent("lk").path, withDestinationPath: ".")
        let job = space.folder.appendingPathComponent("job.json")
        try #"""
        {"version": 1, "name": "e2e", "baseURL": "\#(space.server.baseURL.absoluteString)",
         "outputDir": ".", "retry": {"maxAttempts": 1}, "tasks": [
          {"id": "job", "path": "/json", "save": "lk/job.json"},
          {"id": "log", "path": "/json", "save": "lk/logs/e2e/x.jsonl"},
          {"id": "a", "path": "/json", "query": {"v": "1"}, "save": "lk/a.json"},
          {"id": "b", "path": "/json", "query": {"v": "2"}, "save": "b.json"}]}
        """#.write(to: job, atomically: true, encoding: .utf8)
        let text = try Data(contentsOf: job)
        for night in 1...2 {
            let run = try await space.run(backend: "curl")
            #expect(run.status == 1, "\(night): \(run.stdout) \(run.stderr)")
            #expect(run.stdout.contains("4 tasks, 2 ok, 2 failed"), "\(night): \(run.stdout)")
            #expect(
                run.stderr.contains("lands on the job file, in its log folder"),
                "\(night): \(run.stderr)")
            #expect(try Data(contentsOf: job) == text, "the job file stands")
            let history = try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path)
            #expect(history.count == night && history.allSatisfy { $0.hasSuffix(".jsonl") })
            #expect(!history.contains("x.jsonl"), "\(history)")
        }
        for name in ["a.json", "b.json"] {
            #expect(
                FileManager.default.fileExists(
                    atPath: space.folder.appendingPathComponent(name).path))
        }
    }

    /// Trial OOO: a records file (`records.to`) through a link to the job's folder replaced
    /// the job file, and a save through a link to `.courier` replaced the conditional state:
    /// the next run could not start.
    @Test("a records file or a save through a link to the job file or .courier fails")
    func noRecordsOrStateThroughALink() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let folder = space.folder
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(".courier"), withIntermediateDirectories: true)
        for (link, target) in [("lk", "."), ("cl", ".courier")] {
            try FileManager.default.createSymbolicLink(
                atPath: folder.appendingPathComponent(link).path, withDestinationPath: target)
        }
        let job = folder.appendingPathComponent("job.json")
        try #"""
        {"version": 1, "name": "e2e", "baseURL": "\#(space.server.baseURL.absoluteString)",
         "outputDir": ".", "retry": {"maxAttempts": 1}, "tasks": [
          {"id": "rec", "path": "/json", "query": {"v": "{\"items\": [{\"id\": 1}]}"},
           "records": {"from": "/items/*", "to": "lk/job.json", "write": "replace"}},
          {"id": "state", "path": "/json", "save": "cl/state"}]}
        """#.write(to: job, atomically: true, encoding: .utf8)
        let text = try Data(contentsOf: job)
        for night in 1...2 {
            let run = try await space.run(backend: "curl")
            #expect(run.status == 1, "\(night): \(run.stdout) \(run.stderr)")
            #expect(
                run.stderr.contains(
                    "in courier's own folder (.courier), which no output may replace"),
                "\(night): \(run.stderr)")
            #expect(try Data(contentsOf: job) == text, "the job file stands")
            #expect(
                !FileManager.default.fileExists(
                    atPath: folder.appendingPathComponent(".courier/state").path))
        }
    }

    /// Trial QQQ: a records file whose CSV has the job file's name (`jobs.csv` beside
    /// `jobs.jsonl`) was left unwritten in silence, exit 0.
    @Test("a records CSV that would replace the job file fails the run")
    func noCSVOverTheJobFile() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = space.folder.appendingPathComponent("jobs.csv")
        try #"""
        {"version": 1, "name": "e2e", "baseURL": "\#(space.server.baseURL.absoluteString)",
         "outputDir": ".", "tasks": [
          {"id": "rec", "path": "/json", "query": {"v": "{\"items\": [{\"id\": 1}]}"},
           "records": {"from": "/items/*", "to": "jobs.jsonl", "write": "replace",
                       "select": ["id"], "csv": true}}]}
        """#.write(to: job, atomically: true, encoding: .utf8)
        let text = try Data(contentsOf: job)
        let run = try await CourierBinary.run(
            ["run", "jobs.csv", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("jobs.csv: lands on the job file"), "\(run.stderr)")
        #expect(try Data(contentsOf: job) == text, "the job file stands")
        // The job file edited since, newer than the records (trial RRR: taken as their CSV,
        // up to date, and the run exited 0).
        try text.write(to: job)
        let again = try await CourierBinary.run(
            ["run", "jobs.csv", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(again.status == 1, "\(again.stdout) \(again.stderr)")
        #expect(again.stderr.contains("jobs.csv: lands on the job file"), "\(again.stderr)")
    }

    /// Trial RRR: an `outputDir` that is a link to the job's log folder took its lock for
    /// another run's: exit 3 every night, which cron wrappers skip in silence.
    @Test("an outputDir that leads into the run's log folder is refused, exit 2")
    func noOutputsInTheLogFolder() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try FileManager.default.createDirectory(
            at: space.logs.appendingPathComponent("e2e"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: space.folder.appendingPathComponent("lg").path,
            withDestinationPath: space.logs.appendingPathComponent("e2e").path)
        try #"""
        {"version": 1, "name": "e2e", "baseURL": "\#(space.server.baseURL.absoluteString)",
         "outputDir": "lg", "tasks": [{"id": "s", "path": "/json", "save": "s.json"}]}
        """#.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 2, "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("(outputDir) is the run's log folder"), "\(run.stderr)")
    }
}

/// Paths on the summary line (trial GG).
@Suite("paths in the summary line")
struct SummaryPathTests {
    @Test("a newline in the job's folder or log folder does not break the summary line")
    func newlineInAFolderName() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let folder = space.folder.appendingPathComponent("night\nly")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let job =
            #"{"version": 1, "name": "nl", "baseURL": "\#(space.server.baseURL.absoluteString)", "tasks": [{"id": "a", "path": "/echo", "save": "a.json"}]}"#
        try job.write(
            to: folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let run = try await CourierBinary.run(
            ["run", "night\nly/job.json", "--log-dir", "logs\nX", "--no-progress"],
            directory: space.folder)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(run.stdout)")
        #expect(run.stdout.contains(#"night\u{A}ly"#), "\(run.stdout)")
    }
}
