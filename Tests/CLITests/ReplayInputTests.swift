import CourierTestSupport
import Foundation
import Testing

/// What `courier replay` is given to read, checked before anything is sent: cron must tell a
/// wrong path from "nothing left to replay", and a log line that cannot say what was sent
/// must not be sent as something else (trial K).
@Suite("replay input")
struct ReplayInputTests {
    @Test("a missing log, an empty folder or log, or one of no log lines exits 2; none is sent")
    func unreadableLogs() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let empty = space.folder.appendingPathComponent("empty.jsonl")
        try Data().write(to: empty)
        let junk = space.folder.appendingPathComponent("junk.jsonl")
        try Data("{\"x\": 1}\nnot json\n".utf8).write(to: junk)
        let bare = space.folder.appendingPathComponent("no-logs-here")
        try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: true)
        let cases: [(arguments: [String], says: String)] = [
            (["missing.jsonl"], "missing.jsonl: cannot read"),
            ([bare.path], "no log lines could be read"),
            ([empty.path], "no log lines could be read"),
            ([junk.path], "no log lines could be read"),
        ]
        for (arguments, says) in cases {
            let replay = try await CourierBinary.run(
                ["replay"] + arguments, directory: space.folder)
            #expect(replay.status == 2, "\(arguments): \(replay.stderr)")
            #expect(replay.stderr.contains(says), "\(arguments): \(replay.stderr)")
            #expect(replay.stderr.contains("nothing was sent"), "\(replay.stderr)")
        }
    }

    @Test("empty standard input is nothing to replay (exit 0); one of no log line exits 2")
    func emptyStandardInput() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let replay = try await StandardInputJobTests.run(
            ["replay", "-"], job: "", in: space.folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        // Trial TTT: it said "no task in the logs matches", of no log at all.
        #expect(
            replay.stdout.contains("nothing to replay: standard input held no log lines"),
            "\(replay.stdout)")
        // Lines there that are not log lines are a mistake, as in a file (trial L: exit 0).
        let garbage = try await StandardInputJobTests.run(
            ["replay", "-"], job: "garbage\n", in: space.folder)
        #expect(garbage.status == 2, "\(garbage.stderr)")
        #expect(garbage.stderr.contains("no log lines could be read"), "\(garbage.stderr)")
    }

    @Test("a typo in --error-kind is refused, naming the kinds; a known kind is taken")
    func errorKindTypo() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "down", "path": "/status/503", "retry": {"maxAttempts": 1}}"#)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 1, "\(run.stderr)")
        let folder = space.logs.appendingPathComponent("e2e").path
        let log = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first {
                $0.hasSuffix(".jsonl")
            })
        let path = folder + "/" + log
        let typo = try await CourierBinary.run(
            ["replay", path, "--error-kind", "timout", "--dry-run"], directory: space.folder)
        #expect(typo.status == 2, "\(typo.stderr)")
        #expect(typo.stderr.contains("got 'timout'"), "\(typo.stderr)")
        #expect(typo.stderr.contains("timeout, connect"), "\(typo.stderr)")
        let known = try await CourierBinary.run(
            ["replay", path, "--error-kind", "unexpectedStatus", "--dry-run"],
            directory: space.folder)
        #expect(known.status == 0, "\(known.stderr)")
        #expect(known.stdout.contains("/status/503"), "\(known.stdout)")
    }

    /// The plan and the curl script listed a hand-written `javascript:` URL as a request to
    /// send (trial K); only the send itself refused it.
    @Test("a logged request no transport can send is refused in the plan, the script and the run")
    func impossibleRequests() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let lines = [
            #"{"event":"request","ts":"2026-11-22T04:15:21.147Z","run":"0badc0de","job":"e2e","task":"js","attempt":1,"method":"GET","url":"javascript:alert(1)","requestHeaders":{},"status":500,"outcome":"failed"}"#,
            #"{"event":"request","ts":"2026-11-22T04:15:22.147Z","run":"0badc0de","job":"e2e","task":"crlf","attempt":1,"method":"GET","url":"http://127.0.0.1:1/x","requestHeaders":{"X-A":"1\r\nX-Injected: 1"},"status":500,"outcome":"failed"}"#,
        ]
        let log = space.folder.appendingPathComponent("hand.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: log)
        for extra in [["--dry-run"], ["--format", "curl"], ["--no-progress"]] {
            let replay = try await CourierBinary.run(
                ["replay", log.path, "--log-dir", space.logs.path] + extra,
                directory: space.folder)
            #expect(replay.status == 2, "\(extra): \(replay.stdout)\(replay.stderr)")
            #expect(!replay.stdout.contains("javascript:"), "\(extra): \(replay.stdout)")
            #expect(!replay.stdout.contains("X-Injected"), "\(extra): \(replay.stdout)")
            for task in ["js", "crlf"] {
                #expect(
                    replay.stderr.contains("task \(task): its logged request cannot be sent"),
                    "\(extra): \(replay.stderr)")
            }
        }
    }

    /// `replay --job --dry-run` and `--format curl` printed the logged requests, while the
    /// replay itself sends what the job builds now (trial L): a script made from the plan
    /// would have sent a URL fixed since, and a POST the job no longer makes.
    @Test("with --job, the plan and the script show the request the job builds now")
    func planShowsTheJobsRequest() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "broken", "path": "/status/404"},
                {"id": "post", "method": "POST", "path": "/status/405", "json": {"x": 1}},
                {"id": "gone", "path": "/status/500"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        try space.writeJob(
            tasks: #"""
                {"id": "broken", "path": "/echo", "query": {"fixed": "1"}},
                {"id": "post", "path": "/echo", "query": {"now": "get"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        for format in [["--dry-run"], ["--format", "curl"]] {
            let plan = try await CourierBinary.run(
                ["replay", "--job", "job.json", "--log-dir", space.logs.path] + format,
                directory: space.folder)
            #expect(plan.status == 1, "\(format): the gone task is refused: \(plan.stderr)")
            #expect(plan.stdout.contains("/echo?fixed=1"), "\(format): \(plan.stdout)")
            #expect(plan.stdout.contains("/echo?now=get"), "\(format): \(plan.stdout)")
            for old in ["/status/404", "/status/405", "POST", "/status/500"] {
                #expect(!plan.stdout.contains(old), "\(format): \(old) in \(plan.stdout)")
            }
            #expect(
                plan.stderr.contains("task gone: the job no longer builds this task"),
                "\(format): \(plan.stderr)")
        }
    }

    /// A `requestBody` of no known form (`{"text": 5}`, a misspelt member) was replayed as a
    /// POST with no body (trial L), where invalid base64 was refused.
    @Test("a logged body of no known form is refused like undecodable base64")
    func malformedBody() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("badbody")
        let url = space.server.url("/echo?key=\(key)").absoluteString
        for body in [
            #"{"text":5}"#, #"{"txt":"{\"x\":2}"}"#, #"{"text":"x","base64":"QUJD"}"#,
        ] {
            let line = #"""
                {"event":"request","ts":"2026-11-22T04:15:21.147Z","run":"0badb0d1","job":"e2e","task":"post","attempt":1,"method":"POST","url":"\#(url)","requestHeaders":{"Content-Type":"application/json"},"requestBody":\#(body),"status":500,"outcome":"failed"}
                """#
            let log = space.folder.appendingPathComponent("edited.jsonl")
            try Data((line + "\n").utf8).write(to: log)
            let replay = try await CourierBinary.run(
                ["replay", log.path, "--log-dir", space.logs.path], directory: space.folder)
            #expect(replay.status == 2, "\(body): \(replay.stdout)\(replay.stderr)")
            #expect(replay.stderr.contains("body cannot be read back"), "\(replay.stderr)")
        }
        let hits =
            BlockingFetch.json(space.server.url("/hits?key=\(key)"))?["requests"]
            as? [[String: Any]]
        #expect(hits?.isEmpty == true, "\(String(describing: hits))")
    }

    /// A hand-edited log whose body's base64 does not decode was replayed with no body at all
    /// and logged `ok`: another request than the one logged. Padding past a multiple of four
    /// decoded (trial M), as if the body were whole.
    @Test(
        "a logged body whose base64 does not decode is refused, and nothing is sent",
        arguments: ["!!not base64!!", "QUJD=", "QUJD===="])
    func undecodableBody(encoded: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("base64")
        let url = space.server.url("/echo?key=\(key)").absoluteString
        let line = #"""
            {"event":"request","ts":"2026-11-22T04:15:21.147Z","run":"0badb64e","job":"e2e","task":"post","attempt":1,"method":"POST","url":"\#(url)","requestHeaders":{"Content-Type":"application/json"},"requestBody":{"base64":"\#(encoded)"},"status":500,"outcome":"failed"}
            """#
        let log = space.folder.appendingPathComponent("edited.jsonl")
        try Data((line + "\n").utf8).write(to: log)
        let replay = try await CourierBinary.run(
            ["replay", log.path, "--log-dir", space.logs.path], directory: space.folder)
        #expect(replay.status == 2, "\(replay.stdout)\(replay.stderr)")
        #expect(replay.stderr.contains("base64 does not decode"), "\(replay.stderr)")
        let hits =
            BlockingFetch.json(space.server.url("/hits?key=\(key)"))?["requests"]
            as? [[String: Any]]
        #expect(hits?.isEmpty == true, "\(String(describing: hits))")
        let show = try await CourierBinary.run(
            ["show", log.path, "post"], directory: space.folder)
        #expect(show.stdout.contains("does not decode"), "\(show.stdout)\(show.stderr)")
    }

    /// Trial MMM: `replay - --job JOB < NIGHT.jsonl` read the pipe for the night's logged
    /// settings first, then found it empty, said "nothing to replay" and exited 0, the
    /// night's write never made. Read once into a copy, the piped log is replayed as a file
    /// would be: its failed write is made, once, and a second replay sends nothing.
    @Test("a piped log replayed with --job repairs its night", arguments: ["dry", "sent"])
    func pipedLogWithJob(mode: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("piped-job")
        let gate = FixtureServer.uniqueKey("piped-job-gate")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)"},
                 "json": {"amount": 4}, "idempotencyKey": true},
                {"id": "get", "path": "/json", "query": {"v": "{\"n\": 1}"}, "save": "n.json"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        await WritesOnceRunTests.toggle(gate, on: space)
        let elsewhere = space.folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let job = space.folder.appendingPathComponent("job.json").path
        // Its own temporary folder: the copy of standard input must be gone after each replay.
        let temporary = space.folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let environment = ["TMPDIR": temporary.path]
        let command =
            "'\(CourierBinary.url.path)' replay - --job '\(job)' --no-progress"
            + (mode == "dry" ? " --dry-run" : "") + " < '\(log)'"
        let replayed = try await CourierBinary.run(
            ["-c", command], executable: URL(fileURLWithPath: "/bin/bash"),
            environment: environment, directory: elsewhere)
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
        #expect(!replayed.stdout.contains("nothing to replay"), "\(replayed.stdout)")
        if mode == "dry" {
            #expect(replayed.stdout.contains("charge\tPOST"), "\(replayed.stdout)")
            #expect(WritesOnceRunTests.effects(space, key: key).count == 0)
            return
        }
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1)
        let again = try await CourierBinary.run(
            ["-c", command], executable: URL(fileURLWithPath: "/bin/bash"),
            environment: environment, directory: elsewhere)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1, "not made again")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
        #expect(leftovers.isEmpty, "the copy of standard input is removed: \(leftovers)")
    }

    /// Trial TTT: a piped replay's repair line was `courier replay -`, which pasted alone
    /// waits on the terminal, or under cron reads nothing and ends 0. It says to pipe the
    /// same lines in again.
    @Test("a piped replay that fails says to pipe the same lines in again")
    func pipedRepairLine() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "down", "path": "/status/503"}"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        let replayed = try await CourierBinary.run(
            ["-c", "'\(CourierBinary.url.path)' replay - --no-progress < '\(log)'"],
            executable: URL(fileURLWithPath: "/bin/bash"), directory: space.folder)
        #expect(replayed.status == 1, "\(replayed.stdout)\(replayed.stderr)")
        #expect(
            replayed.stdout.contains("to repair: … | courier replay -"), "\(replayed.stdout)")
    }

    /// Trial QQQ: `replay OTHER.jsonl --job q.json` left out every line, as of another job,
    /// and said "nothing to replay", exit 0: a cron repair of the wrong log looked done.
    @Test("a replay with --job of another job's log is refused")
    func anotherJobsLog() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(name: "other", tasks: #"{"id": "t", "path": "/status/500"}"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("other").path
            ).first.map { space.logs.appendingPathComponent("other/\($0)").path })
        try space.writeJob(name: "q", tasks: #"{"id": "t", "path": "/status/500"}"#)
        let replayed = try await CourierBinary.run(
            ["replay", log, "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replayed.status == 2, "\(replayed.stdout)\(replayed.stderr)")
        #expect(
            replayed.stderr.contains("the logs are of another job (other), not of --job's q"),
            "\(replayed.stderr)")
    }
}
