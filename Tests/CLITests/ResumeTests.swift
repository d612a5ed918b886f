import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier run --resume` after a run killed with SIGKILL.
@Suite("courier run --resume")
struct ResumeTests {
    /// Tasks s1…s20 are quick; s21…s40 hang on the first run (30 s), so the kill always lands
    /// with the first twenty done and the rest not, however loaded the machine is. The second
    /// job file makes them quick: resuming is by task id, whatever the file says now.
    static func writeJob(_ space: JobWorkspace, key: String, hanging: Bool) throws {
        let slow =
            hanging
            ? #""path": "/slow", "query": {"ms": "30000", "key": "\#(key)-slow", "n": "{n}"}"#
            : #""path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}"#
        try space.writeJob(
            tasks: #"""
                {"id": "s{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 20]}}},
                {"id": "s{n}", \#(slow), "foreach": {"n": {"range": [21, 40]}}}
                """#, extra: #""concurrency": 3, "timeout": 60,"#)
    }

    /// A repair that finds no history (run from another folder, a wrong --log-dir) refused to
    /// guess only by a note on stderr: it ran every task and reported success.
    @Test("--resume with no history refuses, says where it looked, sends nothing; unless asked")
    func resumeWithoutHistoryRefuses() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("nohistory")
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}}"#)
        let refused = try await space.run(["--resume"], backend: "curl")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("no earlier run of this job in"), "\(refused.stderr)")
        #expect(refused.stderr.contains(space.logs.appendingPathComponent("e2e").path))
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing was sent")
        let fresh = try await space.run(["--resume", "--fresh-if-no-history"], backend: "curl")
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
        // With a history now, --resume alone works and has nothing left to send.
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
    }

    @Test("after kill -9, --resume finishes the job and sends no ok task again")
    func resumeAfterKill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("resume")
        try Self.writeJob(space, key: key, hanging: true)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 3, key: "\(key)-slow", server: space.server,
            delay: 0.5)
        _ = await running.wait(seconds: 300)

        let firstOK = Set(
            try space.logLines().filter { $0["outcome"] as? String == "ok" }
                .compactMap { $0["task"] as? String })
        #expect(firstOK == Set((1...20).map { "s\($0)" }), "killed with s1…s20 done")

        // Replay sees only failed tasks; it says that the cut run's others need --resume.
        let replayed = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path],
            directory: space.folder)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout.contains("nothing to replay"), "\(replayed.stdout)")
        #expect(
            replayed.stderr.contains("did not finish")
                && replayed.stderr.contains("courier run job.json --resume"),
            "\(replayed.stderr)")

        try Self.writeJob(space, key: key, hanging: false)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("(20 done by earlier runs)"), "\(resumed.stdout)")
        let lines = try space.logLines()
        let okLines = lines.filter { $0["outcome"] as? String == "ok" }.compactMap {
            $0["task"] as? String
        }
        #expect(okLines.count == 40, "every task ended ok exactly once across both logs")
        #expect(Set(okLines).count == 40)
        let start = try #require(lines.last { $0["event"] as? String == "run.start" })
        #expect((start["resumedFrom"] as? [String])?.count == 1)
        let end = try #require(lines.last)
        #expect((end["tasks"] as? [String: Int])?["alreadyDone"] == 20)

        // No ok task was sent again: s1…s20 reached the server once each.
        let hits = try await ServerHits.of(key, on: space.server).requests
        for n in 1...20 {
            #expect(hits.filter { $0.path.hasSuffix("&n=\(n)") }.count == 1, "s\(n)")
        }
        #expect(hits.count == 40)

        // Resuming a finished job sends nothing.
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.status == 0)
        #expect(again.stdout.contains("0 requests"), "\(again.stdout)")
    }

    /// `--resume LOG` took any file: an empty one, one cut before its first line ended, or
    /// another job's log read as "no task done", and the resume sent everything again, a
    /// write the server had answered too (trial R). Such a log is refused, and a log of the
    /// job that leaves a write out does not send it twice: the job's history still has it.
    @Test("--resume LOG refuses a log that is not the job's; a write the history has is not resent")
    func resumeFromANamedLogKeepsWritesOnce() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("named-log")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"}, "json": {"amount": 1200}},
                {"id": "broken", "path": "/status/500", "query": {"key": "\#(key)"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        func posts() async throws -> Int {
            try await ServerHits.of(key, on: space.server).requests.filter { $0.method == "POST" }
                .count
        }
        #expect(try await posts() == 1)
        let empty = space.folder.appendingPathComponent("empty.jsonl")
        let cut = space.folder.appendingPathComponent("cut.jsonl")
        let other = space.folder.appendingPathComponent("other.jsonl")
        let headOnly = space.folder.appendingPathComponent("head.jsonl")
        try Data().write(to: empty)
        try Data(String(lines[0]).utf8.prefix(100)).write(to: cut)
        try Data(
            (lines[0].replacingOccurrences(of: #""job":"e2e""#, with: #""job":"rp""#) + "\n").utf8
        )
        .write(to: other)
        try Data((lines[0] + "\n").utf8).write(to: headOnly)
        for (file, words) in [
            (empty, "not a courier log"), (cut, "not a courier log"),
            (other, "is a log of job 'rp', not of 'e2e'"),
        ] {
            let refused = try await space.run(["--resume", file.path], backend: "curl")
            #expect(refused.status == 2, "\(file.lastPathComponent): \(refused.stderr)")
            #expect(refused.stderr.contains(words), "\(refused.stderr)")
        }
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "nothing more sent")
        // The run's own first line alone: no task done by it, but the charge was answered.
        let resumed = try await space.run(["--resume", headOnly.path], backend: "curl")
        #expect(resumed.status == 1, "broken fails again: \(resumed.stderr)")
        #expect(try await posts() == 1, "the charge went once: \(resumed.stderr)")
        // The job's history has it done: it is done here too, not a write "not sent" and
        // counted held with no line in the log (trial T).
        #expect(!resumed.stderr.contains("task charge not sent"), "\(resumed.stderr)")
        #expect(!resumed.stdout.contains("not sent again"), "\(resumed.stdout)")
        #expect(resumed.stdout.contains("(1 done by earlier runs)"), "\(resumed.stdout)")
        let plan = try await space.run(["--resume", headOnly.path, "--dry-run"], backend: "curl")
        #expect(!plan.stdout.contains("charge\t(not sent"), "\(plan.stdout)")
    }

    /// A second `--resume LOG` sent again every task the first had repaired, since the named
    /// log says they failed, and its summary said "the job's history: every task done"
    /// (trial U). A resume naming a log reads the repairs of it made since: a `replay --job`
    /// of it, and resumes that named it.
    @Test("--resume LOG reads the repairs made of that log since: a second one sends nothing")
    func resumeFromANamedLogTwice() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("named-twice")
        let toggle = FixtureServer.uniqueKey("named-twice-toggle")
        try space.writeJob(
            tasks: #"""
                {"id": "ok", "path": "/echo", "query": {"key": "\#(key)"}},
                {"id": "a{n}", "path": "/toggle", "query": {"name": "\#(toggle)", "n": "{n}"},
                 "foreach": {"n": {"range": [1, 4]}}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "a1-a4 fail: \(night.stderr)")
        let log = try #require(try ReplayTests.logFiles(space).first)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let replayed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--task", "a1", "--no-progress"],
            directory: space.folder)
        #expect(replayed.status == 0, "\(replayed.stdout) \(replayed.stderr)")
        // The replay did a1: the resume sends the other three.
        let resumed = try await space.run(["--resume", log], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains(" 3 requests "), "\(resumed.stdout)")
        for _ in 0..<2 {
            let again = try await space.run(["--resume", log], backend: "curl")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains(" 0 requests "), "\(again.stdout)")
            #expect(again.stdout.contains("(5 done by earlier runs)"), "\(again.stdout)")
        }
    }

    /// Trial FFF: `b.json`, another job file of `a.json`'s name in one folder, resumed
    /// `a.json`'s failed night as its own: it sent nothing and left `a.json`'s answer as its
    /// saved file. A job file whose name another file's history holds is refused, whatever
    /// the command; the same file by a link is the same job, and one moved away leaves its
    /// history to the file that takes its place.
    @Test("another job file of the same name: its history is not this one's")
    func anotherJobFileOfTheSameName() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        func write(_ file: String, status: Int, name: String = "dup") throws {
            try
                #"{"version": 1, "name": "\#(name)", "baseURL": "\#(space.server.baseURL.absoluteString)", "retry": {"maxAttempts": 1}, "tasks": [{"id": "t", "path": "/status/\#(status)", "save": "t.txt"}]}"#
                .write(
                    to: space.folder.appendingPathComponent(file), atomically: true,
                    encoding: .utf8)
        }
        try write("a.json", status: 503)
        try write("b.json", status: 201)
        func courier(_ arguments: [String]) async throws -> CourierBinary.Result {
            try await CourierBinary.run(arguments + ["--no-progress"], directory: space.folder)
        }
        #expect(try await courier(["run", "a.json"]).status == 1)
        // A replay of a.json's log alone (its log names no job file) in between changes
        // nothing (trial JJJ: b.json then took the history).
        let night = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.folder.appendingPathComponent("logs/dup").path
            ).first)
        _ = try await courier(["replay", "logs/dup/\(night)"])
        for command in [
            ["run", "b.json", "--resume"], ["run", "b.json"], ["replay", "--job", "b.json"],
        ] {
            let refused = try await courier(command)
            #expect(
                refused.status == 2
                    && refused.stderr.contains(
                        "holds the history of another job file of the same name")
                    && refused.stderr.contains("a.json"), "\(command): \(refused.stderr)")
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/dup/t.txt").path))
        // A dry run says so, and plans (trial III: it planned without a word).
        let plan = try await courier(["replay", "--job", "b.json", "--dry-run"])
        #expect(
            plan.status == 0 && plan.stderr.contains("warning: ")
                && plan.stderr.contains("another job file of the same name"), "\(plan.stderr)")
        // The same file by a symbolic link is the same job.
        try FileManager.default.createSymbolicLink(
            atPath: space.folder.appendingPathComponent("link.json").path,
            withDestinationPath: "a.json")
        let linked = try await courier(["run", "link.json", "--resume"])
        #expect(
            linked.status == 1 && !linked.stderr.contains("another job file"), "\(linked.stderr)")
        // Given another name (as the refusal advises), a.json leaves its history to the file
        // that takes its place (trial III: b.json was still refused); moved away, the same.
        try FileManager.default.removeItem(at: space.folder.appendingPathComponent("link.json"))
        try write("a.json", status: 503, name: "dup-a")
        let taken = try await courier(["run", "b.json", "--resume"])
        #expect(taken.status == 0, "\(taken.stderr)")
    }

    /// Trial FFF: a resume's dry run said "0 done by earlier runs" where the run said "(48
    /// done by earlier runs)": the children a listing sent again fans out to are found done
    /// only as it runs. The plan says they are not sent either, and counted then.
    @Test("a resume's plan that sends a producer again says its done children are not sent")
    func planOfAProducerSentAgain() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/status/503", "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "item-{id}", "path": "/echo", "query": {"id": "{id}"},
                 "foreach": {"id": {"capture": "ids"}}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains(
                "1 task to send (and the children of what they capture), 0 done by earlier runs and not sent (nor the children earlier runs did, counted as the run finds them)"
            ), "\(plan.stdout)")
    }
}
