import CourierTestSupport
import Foundation
import Testing

/// A repair sends what the history lacks and nothing else: a listing whose run kept its
/// captured ids is not fetched again to rebuild its children (``KeptCaptures``), and the dry
/// run lists exactly what the repair sends.
@Suite("kept captures")
struct KeptCapturesTests {
    /// A listing of six ids over three pages, each id a saved child that fails its first
    /// request (the job tries once), and an unrelated task.
    static func tasks(key: String) -> String {
        #"""
        {"id": "list", "path": "/pages", "query": {"style": "link", "total": "6", "size": "2", "key": "\#(key)-list"},
         "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
        {"id": "item-{id}", "path": "/flaky", "query": {"key": "\#(key)-{id}", "fail": "1"},
         "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"},
        {"id": "other", "path": "/bytes", "query": {"n": "64"}, "save": "other.bin"}
        """#
    }

    static let extra = #""retry": {"maxAttempts": 1},"#

    /// The URLs of a log's request lines.
    static func urls(_ lines: [[String: Any]]) -> Set<String> {
        Set(
            lines.filter { $0["event"] as? String == "request" }.compactMap { $0["url"] as? String }
        )
    }

    @Test(
        "a resume sends only the failed children, not the listing, and ends as a clean run",
        arguments: ["curl", "urlsession"])
    func resumeSkipsListing(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-\(UUID().uuidString)"
        try space.writeJob(tasks: Self.tasks(key: key), extra: Self.extra)
        let night = try await space.run(backend: backend)
        #expect(night.status == 1, "\(night.stderr)")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 3)

        // The dry run lists the six children and nothing else to send.
        let plan = try await space.run(["--resume", "--dry-run"], backend: backend)
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = plan.stdout.split(separator: "\n").filter { $0.contains("\tGET ") }
        #expect(planned.count == 6, "\(plan.stdout)")
        #expect(
            plan.stdout.contains(
                "list\t(not sent: done by an earlier run, which kept its 6 captured values)"))
        #expect(
            plan.stdout.contains("resume: 6 tasks to send, 2 done by earlier runs"),
            "\(plan.stdout)")

        let logsBefore = Set(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path))
        let repair = try await space.run(["--resume"], backend: backend)
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("6 requests"), "\(repair.stdout)")
        #expect(
            try await ServerHits.of("\(key)-list", on: space.server).count == 3, "no page again")
        // What the repair sent is what its dry run listed.
        let newLog = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).first { !logsBefore.contains($0) })
        let sent = Self.urls(
            try String(
                contentsOf: space.logs.appendingPathComponent("e2e/\(newLog)"), encoding: .utf8
            ).split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        let listed = Set(
            planned.compactMap { $0.split(separator: "\t").dropFirst().first }.map {
                String($0.dropFirst("GET ".count))
            })
        #expect(sent == listed)

        // Byte for byte the outputs of a run that nothing interrupted: the same server, and
        // a retry in the run itself for each child's first failure.
        let clean = try JobWorkspace()
        defer { clean.remove() }
        try clean.writeJob(
            tasks: Self.tasks(key: "clean-\(key)"),
            extra: #""retry": {"maxAttempts": 2, "initialDelay": 0.01},"#)
        let cleanRun = try await clean.run(backend: backend)
        #expect(cleanRun.status == 0, "\(cleanRun.stderr)")
        for name in ["other.bin"] + (0..<6).map({ "items/\($0).json" }) {
            let repaired = try Data(contentsOf: space.folder.appendingPathComponent("out/\(name)"))
            let fresh = try Data(contentsOf: clean.folder.appendingPathComponent("out/\(name)"))
            #expect(repaired == fresh, "\(name)")
        }
    }

    /// `run --task` and a done listing whose run kept its ids: named, it is sent (it was not,
    /// and the run said no task matched `list`); not named, its kept ids stand in, and the
    /// plan says so (it listed the listing as sent).
    @Test("run --task sends a done listing it names; one it does not name stays unsent, as planned")
    func taskRunAndKeptListing() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "named-\(UUID().uuidString)"
        try space.writeJob(tasks: Self.tasks(key: key), extra: Self.extra)
        _ = try await space.run(backend: "curl")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 3)

        // `other` takes nothing the listing captures: the listing is no part of its run.
        let otherPlan = try await space.run(["--task", "other", "--dry-run"], backend: "curl")
        #expect(!otherPlan.stdout.contains("list\t"), "\(otherPlan.stdout)")
        #expect(otherPlan.stdout.contains(": 1 task on curl"), "\(otherPlan.stdout)")
        let itemPlan = try await space.run(["--task", "item-2", "--dry-run"], backend: "curl")
        #expect(itemPlan.stdout.contains("list\t(not sent: run "), "\(itemPlan.stdout)")
        let other = try await space.run(["--task", "other"], backend: "curl")
        #expect(other.stdout.contains("1 task, 1 ok, 0 failed, 1 request"), "\(other.stdout)")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 3)

        let listPlan = try await space.run(["--task", "list", "--dry-run"], backend: "curl")
        #expect(listPlan.stdout.contains("list\tGET "), "\(listPlan.stdout)")
        let list = try await space.run(["--task", "list"], backend: "curl")
        #expect(list.status == 0, "\(list.stdout)\(list.stderr)")
        #expect(list.stdout.contains("1 task, 1 ok, 0 failed, 3 requests"), "\(list.stdout)")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 6)

        // A resume of the children only: the listing's kept ids stand in, uncounted.
        let childrenPlan = try await space.run(
            ["--resume", "--task", "item-*", "--dry-run"], backend: "curl")
        #expect(
            childrenPlan.stdout.contains("resume: 6 tasks to send, 0 done by earlier runs"),
            "\(childrenPlan.stdout)")
        let children = try await space.run(["--resume", "--task", "item-*"], backend: "curl")
        #expect(children.stdout.contains("6 tasks, 6 ok, 0 failed"), "\(children.stdout)")
    }

    /// `run --task GLOB --dry-run` over a fan-out whose listing's ids were kept: the plan lists
    /// the children the glob chooses and counts them as the run sends them (a trial's plan
    /// said "0 tasks", and the run then sent one); a glob that chooses no child exits 2 in
    /// the plan as in the run.
    @Test("run --task over kept children: the plan lists and counts what the run sends")
    func taskPlanListsKeptChildren() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "plan-kept-\(UUID().uuidString)"
        try space.writeJob(tasks: Self.tasks(key: key), extra: Self.extra)
        _ = try await space.run(backend: "curl")
        let plan = try await space.run(["--task", "item-[23]", "--dry-run"], backend: "curl")
        #expect(plan.status == 0, "\(plan.stderr)")
        let listed = plan.stdout.split(separator: "\n").filter { $0.hasPrefix("item-") }
        #expect(listed.map { $0.prefix(7) } == ["item-2\t", "item-3\t"], "\(plan.stdout)")
        #expect(plan.stdout.contains(": 2 tasks on curl"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("fan-out"), "\(plan.stdout)")
        let run = try await space.run(["--task", "item-[23]"], backend: "curl")
        #expect(run.stdout.contains("2 tasks, 2 ok, 0 failed, 2 requests"), "\(run.stdout)")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 3)

        let nonePlan = try await space.run(["--task", "item-9", "--dry-run"], backend: "curl")
        let none = try await space.run(["--task", "item-9"], backend: "curl")
        #expect(nonePlan.status == 2 && none.status == 2, "\(nonePlan.stdout)\(none.stderr)")
        #expect(nonePlan.stderr.contains("--task item-9: no task"), "\(nonePlan.stderr)")
        #expect(none.stderr.contains("the values captured by the last run"), "\(none.stderr)")
    }

    /// A done task that `run --task` chose and that fails now is not done: the run asked for
    /// it again, and its repair sends it. (A trial's refetch failed, the summary said "the
    /// job's history: every task done", and `--resume` had nothing to send.)
    @Test("a task run --task chose again and that failed is not done; --resume sends it")
    func chosenTaskThatFailsIsNotDone() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "chosen-\(UUID().uuidString)"
        try space.writeJob(tasks: Self.tasks(key: key), extra: Self.extra)
        _ = try await space.run(backend: "curl")
        let repaired = try await space.run(["--resume"], backend: "curl")
        #expect(repaired.stdout.contains("every task done"), "\(repaired.stdout)")
        // The children's third request fails: the refetch of two of them.
        try space.writeJob(
            tasks: Self.tasks(key: key).replacingOccurrences(
                of: #""fail": "1""#, with: #""fail": "3""#), extra: Self.extra)
        let chosen = try await space.run(["--task", "item-[12]"], backend: "curl")
        #expect(chosen.status == 1, "\(chosen.stdout)")
        #expect(chosen.stdout.contains("2 tasks not done"), "\(chosen.stdout)")
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("resume: 2 tasks to send"), "\(plan.stdout)")
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.stdout.contains("0 failed, 2 requests"), "\(again.stdout)")
        #expect(again.stdout.contains("every task done"), "\(again.stdout)")
    }

    @Test("without its kept file, or with one of another run, the listing is fetched again")
    func fallsBackToSending() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-gone-\(UUID().uuidString)"
        try space.writeJob(tasks: Self.tasks(key: key), extra: Self.extra)
        _ = try await space.run(backend: "curl")
        let folder = space.folder.appendingPathComponent("out/.courier/captures")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") }
        #expect(files.count == 1, "one kept file, the listing's: \(files)")
        let file = folder.appendingPathComponent(try #require(files.first))
        // Another run's file: the header names a run the history does not credit.
        var text = try String(contentsOf: file, encoding: .utf8)
        let run = try #require(text.firstRange(of: #/"run":"([0-9a-f]+)"/#))
        text.replaceSubrange(run, with: #""run":"00000000""#)
        try text.write(to: file, atomically: true, encoding: .utf8)

        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains("(done, sent again: what it captures is needed and was not kept)"),
            "\(plan.stdout)")
        #expect(plan.stdout.contains("item-{id} for each of ids"), "\(plan.stdout)")
        let repair = try await space.run(["--resume"], backend: "curl")
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(
            try await ServerHits.of("\(key)-list", on: space.server).count == 6, "the listing again"
        )
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/items/5.json").path))
    }

    @Test("a secret capture is never kept: the login is sent again, and its token written nowhere")
    func secretsAreNotKept() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-secret-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/json", "query": {"v": "{{\"token\": \"tok-\#(key)\"}}"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "use", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"},
                 "headers": {"X-Token": "{token}"}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "\(night.stderr)")
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/.courier/captures").path))
        // A replay's dry run plans the login it sends again (it once said "1 request" and
        // sent two).
        let plan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run", "--log-dir", space.logs.path],
            directory: space.folder)
        #expect(plan.stdout.contains("2 requests to replay"), "\(plan.stdout)\(plan.stderr)")
        #expect(
            plan.stdout.contains(
                "login\tGET http://127.0.0.1:\(space.server.port)/json?v=%7B%22token%22%3A%20%22tok-\(key)%22%7D\t(not chosen, sent again: it captures token, which no earlier run kept)"
            ), "\(plan.stdout)")
        let repair = try await space.run(["--resume"], backend: "curl")
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("2 requests"), "login again, then use: \(repair.stdout)")
        #expect(try space.everyWrittenByte().range(of: Data("tok-\(key)".utf8)) == nil)
    }

    @Test(
        "a login held as a write answered before: done tasks stay done, and the dry runs say what the runs do"
    )
    func heldLogin() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "held-login-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "method": "POST", "safe": false, "path": "/json",
                 "query": {"v": "{{\"token\": \"tok-\#(key)\"}}"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "ok", "path": "/echo", "query": {"key": "\#(key)-ok"}, "headers": {"X-Token": "{token}"}},
                {"id": "use", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"},
                 "headers": {"X-Token": "{token}"}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.stdout.contains("3 tasks, 2 ok, 1 failed"), "\(night.stdout)")

        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains(
                "use\t(not sent: token is captured by login, a write not sent again"),
            "\(plan.stdout)")
        #expect(
            plan.stdout.contains("0 tasks to send, 2 done by earlier runs"), "\(plan.stdout)")
        let replayPlan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run", "--log-dir", space.logs.path],
            directory: space.folder)
        #expect(replayPlan.stdout.contains("0 requests to replay"), "\(replayPlan.stdout)")
        #expect(replayPlan.stdout.contains("use\t(not sent: token"), "\(replayPlan.stdout)")

        // The resume cannot send `use` (its token would come from the held login), and `ok`,
        // done, stays done: it was once logged as skipped, and the history lost it.
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.stdout.contains("(2 done by earlier runs)"), "\(resume.stdout)")
        #expect(resume.stdout.contains("the job's history: 1 task not done"), "\(resume.stdout)")
        #expect(
            !(try space.logLines()).contains {
                $0["event"] as? String == "task.skipped" && $0["task"] as? String == "ok"
            })
        #expect(try await ServerHits.of("\(key)-ok", on: space.server).count == 1)

        // `--resume --task login` names the held write: the plan and the run send it, and
        // count only it (the run said "1 task, 2 ok, -1 failed": it counted `ok`, done and
        // not chosen, as done).
        let namedPlan = try await space.run(
            ["--resume", "--task", "login", "--dry-run"], backend: "curl")
        #expect(namedPlan.stdout.contains("login\tPOST "), "\(namedPlan.stdout)")
        #expect(namedPlan.stdout.contains("resume: 1 task to send"), "\(namedPlan.stdout)")
        #expect(!namedPlan.stdout.contains("(not sent"), "\(namedPlan.stdout)")
        let named = try await space.run(["--resume", "--task", "login"], backend: "curl")
        #expect(named.stdout.contains("1 task, 1 ok, 0 failed, 1 request"), "\(named.stdout)")
        // `replay --job --all` holds the login and cannot build `ok`: it stays done.
        let all = try await CourierBinary.run(
            [
                "replay", "--job", "job.json", "--all", "--log-dir", space.logs.path,
                "--no-progress",
            ],
            directory: space.folder)
        #expect(all.status == 1, "\(all.stdout)\(all.stderr)")
        let after = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            after.stdout.contains("2 done by earlier runs"),
            "a replay that held the login undid the done tasks: \(after.stdout)")
    }

    /// A resume sends a done login again for its secret token (never kept); tonight the login
    /// fails. It was done, and stays so: the history of the night only gains. Before, the
    /// resume made it failed, and the history said 2 tasks not done where 1 was.
    @Test("a done login a resume sends again, failing now, stays done; so do the tasks it fed")
    func resentLoginFails() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "wilting-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/wilting", "query": {"key": "\#(key)", "ok": "1"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "ok", "path": "/echo", "query": {"key": "\#(key)-ok"}, "headers": {"X-Token": "{token}"}},
                {"id": "use", "path": "/flaky", "query": {"key": "\#(key)-use", "fail": "5"},
                 "headers": {"X-Token": "{token}"}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.stdout.contains("3 tasks, 2 ok, 1 failed"), "\(night.stdout)")
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 1)
        #expect(
            resume.stdout.contains("the job's history: 1 task not done"),
            "\(resume.stdout)\(resume.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "sent again")
        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replay.status == 1)
        #expect(try await ServerHits.of(key, on: space.server).count == 3, "sent again")
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        // The login again (for its token), and `use`; `ok` is done.
        #expect(plan.stdout.contains("2 tasks to send, 1 done by earlier runs"), "\(plan.stdout)")
        #expect(try await ServerHits.of("\(key)-ok", on: space.server).count == 1)
    }

    /// The same with a fan-out that takes the token too: the resume cannot expand it and
    /// skips it as `item-{id}`; the plain run had reached its children, whose own lines
    /// decide. That skip had counted as one task more not done (a trial: 1 became 2).
    @Test("a failing login a resume sends again adds no task not done for a fan-out it feeds")
    func resentLoginFailsBeforeAFanOut() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "wilting-fan-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/wilting", "query": {"key": "\#(key)", "ok": "1"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "list", "path": "/json", "query": {"v": "{{\"ids\": [1, 2, 3]}}"},
                 "headers": {"X-Token": "{token}"}, "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "item-{id}", "path": "/flaky", "query": {"key": "\#(key)-{id}", "fail": "{id}"},
                 "headers": {"X-Token": "{token}"}, "foreach": {"id": {"capture": "ids"}}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        // item-2 and item-3 fail their first request; item-1 too (fail=1), so 3 of 5 fail.
        #expect(night.stdout.contains("5 tasks, 2 ok, 3 failed"), "\(night.stdout)")
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 1)
        #expect(
            resume.stdout.contains("the job's history: 3 tasks not done"),
            "\(resume.stdout)\(resume.stderr)")
        let report = try await CourierBinary.run(
            ["report", "--json", space.logs.appendingPathComponent("e2e").path])
        #expect(!report.stdout.contains("item-{id}"), "\(report.stdout)")
    }

    /// A listing that takes a login's token, whose ids were kept, and children that take no
    /// token; one child failed. The resume needs the listing's ids, which were kept, so not
    /// the login (a third trial saw it sent again, and when it then failed, the failed child
    /// was silently not sent, with no line). The listing, which cannot be built without the
    /// token, hands its kept ids to its children.
    @Test("a listing's kept ids reach its children though the login it takes is not sent again")
    func keptIdsSurviveAFailedLogin() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-login-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/wilting", "query": {"key": "\#(key)", "ok": "1"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "list", "path": "/json", "query": {"v": "{{\"ids\": [0, 1]}}"},
                 "headers": {"X-Token": "{token}"}, "capture": {"ids": {"json": "/ids/*"}}},
                {"id": "item-{id}", "path": "/flaky", "query": {"key": "\#(key)-{id}", "fail": "{id}"},
                 "foreach": {"id": {"capture": "ids"}}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.stdout.contains("4 tasks, 3 ok, 1 failed"), "\(night.stdout)")
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("item-1\tGET "), "\(plan.stdout)")
        #expect(!plan.stdout.contains("login\t"), "\(plan.stdout)")
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(
            resume.stdout.contains("the job's history: every task done"),
            "\(resume.stdout)\(resume.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1, "the login, once")
        #expect(try await ServerHits.of("\(key)-1", on: space.server).count == 2, "sent again")
        #expect(try await ServerHits.of("\(key)-0", on: space.server).count == 1)
    }

    /// A resume sends a done login again (its secret token is never kept) only when a task not
    /// done takes the token: here only `plain` failed, and it takes nothing; the login, and
    /// the done `misc` that takes its token, stay as they are (the login had been sent again
    /// by every resume). The plan says the same.
    @Test("a resume does not send a done login again when no task not done takes its token")
    func resumeLeavesAnUnneededLogin() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "unneeded-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/json", "query": {"v": "{{\"token\": \"tok-\#(key)\"}}", "key": "\#(key)-login"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "misc", "path": "/echo", "query": {"key": "\#(key)-misc"}, "headers": {"X-Token": "{token}"}},
                {"id": "plain", "path": "/flaky", "query": {"key": "\#(key)-plain", "fail": "1"}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.stdout.contains("3 tasks, 2 ok, 1 failed"), "\(night.stdout)")
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(!plan.stdout.contains("login\t"), "\(plan.stdout)")
        #expect(
            plan.stdout.contains("resume: 1 task to send, 2 done by earlier runs"), "\(plan.stdout)"
        )
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 0, "\(resume.stdout)\(resume.stderr)")
        #expect(resume.stdout.contains("1 request"), "\(resume.stdout)")
        #expect(resume.stdout.contains("the job's history: every task done"), "\(resume.stdout)")
        #expect(try await ServerHits.of("\(key)-login", on: space.server).count == 1)
        #expect(try await ServerHits.of("\(key)-misc", on: space.server).count == 1)
    }

    /// A login, a listing whose ids are kept, and children that take the login's token. A
    /// resume of a whole history sends nothing (the login had been sent again every time: a
    /// fan-out's children counted as not done before the run); a resume whose login now fails
    /// skips each child not done under its own id (they were one line under `user-{id}`),
    /// and the next resume ends as a clean run.
    @Test(
        "a fan-out that takes a token: nothing re-sent when every child is done; skips by id",
        arguments: ["curl", "urlsession"])
    func fanOutTakingAToken(backend: String) async throws {
        let key = FixtureServer.uniqueKey("fan-token-\(backend)")
        let job = CaptureTests.syncJob(key: key, total: 12, perPage: 5)
        let clean = try await CaptureTests.cleanSyncRun(key: key, backend: backend)
        defer { clean.remove() }
        let again = try await clean.run(
            ["--resume"], backend: backend, environment: CaptureTests.environment)
        #expect(again.stdout.contains(" 0 requests "), "\(again.stdout)")
        #expect(again.stdout.contains("(14 done by earlier runs)"), "\(again.stdout)")

        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: job)
        let some = try await space.run(
            ["--task", "user-1*"], backend: backend, environment: CaptureTests.environment)
        #expect(some.status == 0, "\(some.stderr)")
        let refused = try await space.run(
            ["--resume"], backend: backend, environment: ["SYNC_PASSWORD": "wrong"])
        #expect(refused.status == 1, "\(refused.stdout)")
        let skipped = try space.logLines().filter { $0["event"] as? String == "task.skipped" }
            .compactMap { $0["task"] as? String }
        #expect(skipped.sorted() == (2...9).map { "user-\($0)" }.sorted(), "\(skipped)")
        #expect(refused.stdout.contains("8 tasks not done"), "\(refused.stdout)")
        let repaired = try await space.run(
            ["--resume"], backend: backend, environment: CaptureTests.environment)
        #expect(repaired.stdout.contains("every task done"), "\(repaired.stdout)")
        #expect(RecoveryMatrixTests.outputs(space) == RecoveryMatrixTests.outputs(clean))
    }

    /// `--resume --task` over a fan-out that takes a token: the login goes out only when a
    /// child the run chose is not done, and the plan counts what the run counts (it had sent
    /// the login for children all done, and planned "0 done").
    @Test("--resume --task sends the login only for chosen children not done; the plan agrees")
    func resumeTaskOverAFanOut() async throws {
        let key = FixtureServer.uniqueKey("resume-task-fan")
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: CaptureTests.syncJob(key: key, total: 12, perPage: 5))
        let env = CaptureTests.environment
        let some = try await space.run(["--task", "user-1*"], backend: "curl", environment: env)
        #expect(some.stdout.contains("6 tasks, 6 ok"), "\(some.stdout)")
        func logins() throws -> Int {
            try space.logLines().filter {
                $0["event"] as? String == "request" && $0["task"] as? String == "login"
            }.count
        }
        // Every child it chooses is done: nothing is sent, and all four are counted done.
        let donePlan = try await space.run(
            ["--resume", "--task", "user-1*", "--dry-run"], backend: "curl", environment: env)
        #expect(
            donePlan.stdout.contains("resume: 0 tasks to send, 4 done by earlier runs"),
            "\(donePlan.stdout)")
        let doneRun = try await space.run(
            ["--resume", "--task", "user-1*"], backend: "curl", environment: env)
        #expect(doneRun.stdout.contains(" 0 requests "), "\(doneRun.stdout)")
        #expect(doneRun.stdout.contains("(4 done by earlier runs)"), "\(doneRun.stdout)")
        #expect(try logins() == 1)
        // Eight chosen children are not done: the login is sent for them, the listing's kept
        // ids stand in for it, and the plan's figures are the run's.
        let plan = try await space.run(
            ["--resume", "--task", "user-*", "--dry-run"], backend: "curl", environment: env)
        #expect(
            plan.stdout.contains("resume: 9 tasks to send, 4 done by earlier runs"),
            "\(plan.stdout)")
        #expect(
            plan.stdout.contains(
                "users\t(not sent: done by an earlier run, which kept its 12 captured values)"),
            "\(plan.stdout)")
        let run = try await space.run(
            ["--resume", "--task", "user-*"], backend: "curl", environment: env)
        #expect(run.stdout.contains("13 tasks, 13 ok, 0 failed, 9 requests"), "\(run.stdout)")
        #expect(run.stdout.contains("(4 done by earlier runs)"), "\(run.stdout)")
        #expect(try logins() == 2)
    }

    @Test("replay --job --dry-run counts a task whose path takes a token captured again")
    func tokenInPath() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "token-path-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/json", "query": {"v": "{{\"token\": \"tok-\#(key)\"}}"},
                 "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "use", "path": "/echo/{token}", "query": {"key": "\#(key)"},
                 "expect": {"status": [201]}}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "\(night.stdout)\(night.stderr)")
        let plan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run", "--log-dir", space.logs.path],
            directory: space.folder)
        #expect(plan.status == 0, "it was refused: \(plan.stderr)")
        #expect(plan.stdout.contains("use\t(sent once token is captured again)"), "\(plan.stdout)")
        #expect(plan.stdout.contains("2 requests to replay"), "\(plan.stdout)")
        // With --all the login is chosen too: what it captures still comes first (the plan had
        // refused `use`, saying the job now builds another URL, and exited 1).
        let allPlan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--all", "--dry-run", "--log-dir", space.logs.path],
            directory: space.folder)
        #expect(allPlan.status == 0, "\(allPlan.stdout)\(allPlan.stderr)")
        #expect(allPlan.stdout.contains("use\t(sent once token is captured again)"))
        #expect(allPlan.stdout.contains("2 requests to replay"), "\(allPlan.stdout)")
        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replay.stdout.contains("2 requests"), "\(replay.stdout)\(replay.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 2)
    }

    @Test("replay --job takes the kept ids too: only the failed children are sent")
    func replayUsesKeptCaptures() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-replay-\(UUID().uuidString)"
        // The children carry a secret header: the log has it redacted, so only the job can
        // build them again, from the ids their listing's run kept.
        let secretTasks = Self.tasks(key: key).replacingOccurrences(
            of: #""save": "items/{id}.json"}"#,
            with: #""save": "items/{id}.json", "headers": {"X-Api-Key": "${env:KEPT_KEY}"}}"#)
        #expect(secretTasks != Self.tasks(key: key))
        let environment = ["KEPT_KEY": "kept-\(UUID().uuidString)"]
        try space.writeJob(tasks: secretTasks, extra: Self.extra)
        _ = try await space.run(backend: "curl", environment: environment)
        let logs = try FileManager.default.contentsOfDirectory(
            atPath: space.logs.appendingPathComponent("e2e").path
        ).map { space.logs.appendingPathComponent("e2e/\($0)").path }
        // The dry run plans what the replay sends: the children built from the kept ids (it
        // once listed them as waiting for the listing, "0 requests to replay"), and as curl
        // commands, a script bash can read (its notes are comments).
        let plan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run"] + logs, environment: environment,
            directory: space.folder)
        #expect(plan.stdout.contains("6 requests to replay"), "\(plan.stdout)\(plan.stderr)")
        #expect(!plan.stdout.contains("rebuilt from the job"), "\(plan.stdout)")
        // Where each saves, as `run --dry-run` says it (trial CCC).
        #expect(
            plan.stdout.split(separator: "\n").filter { $0.contains("\t-> out/items/") }.count
                == 6, "\(plan.stdout)")
        let curl = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run", "--format", "curl"] + logs,
            environment: environment, directory: space.folder)
        #expect(!curl.stdout.contains(environment["KEPT_KEY"]!), "the key is a reference")
        let script = curl.stdout.split(separator: "\n").filter { !$0.hasPrefix("courier:") }
        #expect(script.filter { $0.hasPrefix("curl ") }.count == 6, "\(curl.stdout)")
        #expect(
            script.allSatisfy {
                $0.hasPrefix("curl ") || $0.hasPrefix("#") || $0.isEmpty || $0 == "set -u"
                    || $0.hasPrefix(#": "${"#)
            }, "only commands, comments, `set -u` and the checks of its variables: \(curl.stdout)")
        let syntax = try await CourierBinary.run(
            ["-n", "-c", script.joined(separator: "\n")],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(syntax.status == 0, "\(syntax.stderr)")

        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"] + logs,
            environment: environment, directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        // The six failed children, counted as such: the listing it did not send is in no count
        // (a trial once read "2 ok, -1 failed").
        #expect(replay.stdout.contains("6 tasks, 6 ok, 0 failed, 6 requests"), "\(replay.stdout)")
        #expect(!replay.stdout.contains("done by earlier runs"), "\(replay.stdout)")
        #expect(try await ServerHits.of("\(key)-list", on: space.server).count == 3)
        let end = try #require(space.logLines().last { $0["event"] as? String == "run.end" })
        let tasks = try #require(end["tasks"] as? [String: Any])
        #expect(tasks["total"] as? Int == 6 && tasks["failed"] as? Int == 0, "\(tasks)")
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/items/0.json").path))
    }
    /// Trial Z: a listing that failed midway leaves a skip of the fan-out's template (its ids
    /// from the failed page on never came). `replay --job` sent the listing again, and then
    /// every child its ids made, the ones the night had done too (11 of 23 GETs spent again):
    /// the template's skip selected them all. A child done in the history is not sent; the
    /// ones the night never reached are.
    @Test("replay --job of a listing that failed midway sends only the children not done")
    func replayOfABrokenListingSkipsDoneChildren() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "kept-broken-\(UUID().uuidString)"
        let toggle = "\(key)-pages"
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "6", "size": "2", "key": "\#(key)-list", "fail_start": "4", "fail_until": "\#(toggle)"},
                 "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/echo", "query": {"key": "\#(key)-{id}"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                """#, extra: Self.extra)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "the listing's third page failed: \(night.stdout)")
        for id in 0..<4 {
            #expect(try await ServerHits.of("\(key)-\(id)", on: space.server).count == 1)
        }
        _ = BlockingFetch.json(space.server.url("/toggle/on?name=\(toggle)"))
        let plan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--dry-run"], directory: space.folder)
        #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(!plan.stdout.contains("item-0"), "a done child is not planned: \(plan.stdout)")
        #expect(
            plan.stdout.contains(
                "1 request to replay (a paginated task counts one: its later pages are not counted) and the tasks of 1 line above that the job builds again"
            ),
            "\(plan.stdout)")
        let replay = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--no-progress"], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        for id in 0..<6 {
            let hits = try await ServerHits.of("\(key)-\(id)", on: space.server).count
            #expect(hits == 1, "item-\(id) was sent \(hits) times in all")
        }
        for id in 0..<6 {
            #expect(
                FileManager.default.fileExists(
                    atPath: space.folder.appendingPathComponent("out/items/\(id).json").path))
        }
        // The history is whole: another replay finds nothing to send.
        let again = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--no-progress"], directory: space.folder)
        #expect(again.stdout.contains("nothing to replay"), "\(again.stdout)\(again.stderr)")
    }
}
