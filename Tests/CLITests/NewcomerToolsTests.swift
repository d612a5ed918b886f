import CourierTestSupport
import Foundation
import Testing

/// The tools a newcomer reaches for first: `courier init` (a job file to start from) and
/// `courier show` (one task's requests from a log, readably).
@Suite("init and show")
struct NewcomerToolsTests {
    @Test("init writes a job that validates and plans, and never replaces a file")
    func initSkeleton() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let made = try await CourierBinary.run(
            ["init", "nightly.json", "--base-url", space.server.baseURL.absoluteString],
            directory: space.folder)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("courier validate nightly.json"), "\(made.stdout)")
        let file = space.folder.appendingPathComponent("nightly.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains(#""name": "nightly""#))
        #expect(text.contains(#""description": "#), "it says what each part does")

        let validate = try await CourierBinary.run(
            ["validate", "nightly.json"], directory: space.folder)
        #expect(validate.status == 0, "\(validate.stderr)")
        let plan = try await CourierBinary.run(
            ["run", "nightly.json", "--dry-run"], directory: space.folder)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout.contains("GET \(space.server.baseURL.absoluteString)/items"),
            "\(plan.stdout)")

        // A second init, or one over any file, leaves the file as it was.
        try Data("mine".utf8).write(to: space.folder.appendingPathComponent("mine.json"))
        for name in ["nightly.json", "mine.json"] {
            let before = try Data(contentsOf: space.folder.appendingPathComponent(name))
            let again = try await CourierBinary.run(["init", name], directory: space.folder)
            #expect(again.status == 2)
            #expect(again.stderr.contains("it exists; nothing was written"), "\(again.stderr)")
            #expect(try Data(contentsOf: space.folder.appendingPathComponent(name)) == before)
        }
        let badName = try await CourierBinary.run(["init", "my job.txt"], directory: space.folder)
        #expect(badName.status == 2)
        #expect(badName.stderr.contains("expects a file name like nightly.json"))
    }

    /// A task's variable whose brace is not closed (`/items/{n.json`) is sent as text, as
    /// other braces are, and `validate` and the dry run say so (trial EEE: three tasks went
    /// to one `%7Bn.json` without a word). A brace before no variable of the task is text.
    @Test("an unclosed brace before a task's variable: validate and the dry run warn")
    func unclosedBrace() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "item-{n}", "path": "/store/items/{n.json", "query": {"q": "{x", "e": "{{n"},
                 "foreach": {"n": {"range": [1, 3]}}}
                """#)
        let validate = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(
            validate.stderr.contains(
                #"tasks[0].path: "{n" is not closed, so it is sent as text; did you mean {n}?"#),
            "\(validate.stderr)")
        #expect(!validate.stderr.contains("{x"), "not a variable: \(validate.stderr)")
        #expect(!validate.stderr.contains("query.e"), "an escaped brace: \(validate.stderr)")
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.stderr.contains(#""{n" is not closed"#), "\(plan.stderr)")
    }

    /// `${TOKEN}` written as a shell would, in a JSON body or a raw body: courier sends it as
    /// written (a template literal's `${total}` is text a job may mean), and `validate` and
    /// the dry run say so, naming `${env:TOKEN}`; a run off the terminal (cron) says nothing.
    @Test("a shell's ${NAME} in a body: sent as written; validate and the dry run warn")
    func shellStyleReference() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shell")
        try space.writeJob(
            tasks: #"""
                {"id": "a", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"token": "${API_TOKEN}", "tpl": "${total} items"}},
                {"id": "b", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "body": "x=${SECRET_1}&y=${SECOND}"}
                """#)
        let validate = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(validate.status == 0, "\(validate.stderr)")
        for (path, name) in [
            ("tasks[0].json.token", "API_TOKEN"), ("tasks[1].body", "SECRET_1"),
            ("tasks[1].body", "SECOND"),
        ] {
            #expect(
                validate.stderr.contains(
                    "warning: job.json:"),
                "\(validate.stderr)")
            #expect(
                validate.stderr.contains(
                    "\(path): \"${\(name)}\" is sent as text, as written (courier does not read a shell's references); for the environment variable, write ${env:\(name)}"
                ), "\(validate.stderr)")
        }
        #expect(!validate.stderr.contains("total"), "\(validate.stderr)")
        let json = try await CourierBinary.run(
            ["validate", "--json", "job.json"], directory: space.folder)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        #expect((object["warnings"] as? [[String: Any]])?.count == 3, "\(json.stdout)")
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.stderr.contains("write ${env:API_TOKEN}"), "\(plan.stderr)")
        let run = try await space.run(backend: "curl")
        #expect(run.status == 0)
        #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        let bodies = try await ServerHits.of(key, on: space.server).requests.map(\.body)
        #expect(
            Set(bodies) == [
                #"{"token":"${API_TOKEN}","tpl":"${total} items"}"#, "x=${SECRET_1}&y=${SECOND}",
            ])
    }

    @Test("run --task sends the chosen tasks and what they need, and joins the job's history")
    func runChosenTasks() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = "task-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "4", "size": "2", "key": "\#(key)-list"},
                 "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/bytes", "query": {"n": "1{id}", "key": "\#(key)-item"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"},
                {"id": "other", "path": "/echo", "query": {"key": "\#(key)-other"}}
                """#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 0, "\(night.stderr)")

        let plan = try await space.run(["--task", "other", "--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("other\tGET"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("item-{id}"), "\(plan.stdout)")

        let one = try await space.run(["--task", "item-3"], backend: "curl")
        #expect(one.status == 0, "\(one.stdout)\(one.stderr)")
        #expect(one.stdout.contains("1 task, 1 ok, 0 failed, 1 request"), "\(one.stdout)")
        // It joins the job's history, and says what that history lacks, as a resume does.
        #expect(one.stdout.contains("the job's history: every task done"), "\(one.stdout)")
        #expect(try await ServerHits.of("\(key)-item", on: space.server).count == 5)
        #expect(
            try await ServerHits.of("\(key)-list", on: space.server).count == 2,
            "the listing's kept ids, not its pages again")
        let start = try #require(
            try space.logLines().last { $0["event"] as? String == "run.start" })
        #expect(start["only"] as? [String] == ["item-3"], "\(start)")
        // How many a glob chooses is found as the run goes: the start line does not say 0.
        #expect(start["tasks"] == nil, "\(start)")

        // It completed the history, it did not start it afresh.
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.stdout.contains("the job's history: every task done"), "\(resume.stdout)")
        #expect(resume.stdout.contains(" 0 requests "), "\(resume.stdout)")

        let nonePlan = try await space.run(["--task", "nope", "--dry-run"], backend: "curl")
        #expect(nonePlan.status == 2, "the plan refuses what the run refuses: \(nonePlan.stdout)")
        let logsBefore = try space.logLines().count
        let none = try await space.run(["--task", "nope"], backend: "curl")
        #expect(none.status == 2)
        // No task's id could be `nope` (they are `list`, `item-{id}` and `other`): refused
        // before anything is sent or logged, though the job fans out (it ran and logged).
        #expect(try space.logLines().count == logsBefore, "no run was logged")
        #expect(none.stderr.contains("--task nope: no task of the job has a matching id"))

        // A glob a fan-out's ids could match is known to match nothing only at the run's end:
        // exit 2, and the log's run.end says 2 too (it said 0).
        let noChild = try await space.run(["--task", "item-x*"], backend: "curl")
        #expect(noChild.status == 2, "\(noChild.stdout)\(noChild.stderr)")
        #expect(noChild.stderr.contains("--task item-x*: no task of the job has a matching id"))
        let end = try #require(try space.logLines().last { $0["event"] as? String == "run.end" })
        #expect(end["exitCode"] as? Int == 2, "\(end)")
    }

    @Test("--task that matches no id of a job without fan-out sends nothing and logs no run")
    func taskMatchingNothingIsRefusedBeforeTheRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("notask")
        try space.writeJob(
            tasks: #"""
                {"id": "item-{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 3]}}}
                """#)
        let refused = try await space.run(
            ["--task", "item-3", "--task", "itme-*"], backend: "curl")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("--task itme-*: no task of the job has a matching id"))
        #expect(!refused.stderr.contains("--task item-3:"), "\(refused.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing was sent")
        #expect(
            !FileManager.default.fileExists(atPath: space.logs.appendingPathComponent("e2e").path),
            "no run was logged")
        let chosen = try await space.run(["--task", "item-3"], backend: "curl")
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
    }

    @Test("show prints each attempt of a task readably, secrets redacted as in the log")
    func showTask() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let secret = "s3cret-\(UUID().uuidString)"
        let key = "show-\(UUID().uuidString)"
        try space.writeJob(
            tasks: #"""
                {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"},
                 "retry": {"maxAttempts": 2, "initialDelay": 0.01},
                 "headers": {"Authorization": "Bearer \#(secret)"}},
                {"id": "other", "path": "/echo", "method": "POST", "body": "line one\nline two"},
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "4", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}}}
                """#)
        let run = try await space.run(backend: "curl")
        #expect(run.status == 0, "\(run.stderr)")

        let shown = try await CourierBinary.run(
            ["show", space.logs.appendingPathComponent("e2e").path, "flaky"],
            directory: space.folder)
        #expect(shown.status == 0, "\(shown.stderr)")
        let text = shown.stdout
        #expect(text.contains("task flaky · attempt 1 · retry"), "\(text)")
        #expect(text.contains("task flaky · attempt 2 · ok"), "\(text)")
        #expect(text.contains("> GET \(space.server.baseURL.absoluteString)/flaky?key=\(key)"))
        #expect(text.contains("< 503"), "\(text)")
        #expect(text.contains("< 200"), "\(text)")
        #expect(text.contains("total "), "timings: \(text)")
        #expect(!text.contains(secret), "the token stays redacted")
        #expect(!text.contains("line one"), "only the task asked for")

        let body = try await CourierBinary.run(
            ["show", space.logs.appendingPathComponent("e2e").path, "oth*"],
            directory: space.folder)
        #expect(body.stdout.contains("> POST "), "\(body.stdout)")
        #expect(body.stdout.contains("> line one\n> line two"), "the body as logged")
        // A paginated task's attempts say their page (trial HH2: 600 alike headings).
        let pages = try await CourierBinary.run(
            ["show", space.logs.appendingPathComponent("e2e").path, "list"],
            directory: space.folder)
        #expect(pages.stdout.contains("task list · page 1 · attempt 1 · page"), "\(pages.stdout)")
        #expect(pages.stdout.contains("task list · page 2 · attempt 1 · ok"), "\(pages.stdout)")

        // The job file stands for its logs (logs/e2e in its home).
        let byJob = try await CourierBinary.run(
            ["show", "job.json", "flaky"], directory: space.folder)
        #expect(byJob.status == 0, "\(byJob.stderr)")
        #expect(byJob.stdout == text, "the same attempts as from the log folder")

        let missing = try await CourierBinary.run(
            ["show", space.logs.appendingPathComponent("e2e").path, "nope"],
            directory: space.folder)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no attempt of task 'nope'"), "\(missing.stderr)")
        #expect(missing.stderr.contains("flaky"), "the tasks there: \(missing.stderr)")
        let usage = try await CourierBinary.run(["show", "x.jsonl"], directory: space.folder)
        #expect(usage.status == 2)
        // A wrong path is exit 2, as `report` says it, not "no attempt" (trial EEE: exit 1).
        let wrong = try await CourierBinary.run(
            ["show", "nope.jsonl", "flaky"], directory: space.folder)
        #expect(wrong.status == 2 && wrong.stderr.contains("nope.jsonl"), "\(wrong.stderr)")
        // A file that holds no log line is a wrong path too, as `report` says (trial FFF).
        try "not a log\n{\"also\": \"not one\"}\n".write(
            to: space.folder.appendingPathComponent("other.jsonl"), atomically: true,
            encoding: .utf8)
        let other = try await CourierBinary.run(
            ["show", "other.jsonl", "flaky"], directory: space.folder)
        #expect(
            other.status == 2 && other.stderr.contains("no log lines could be read"),
            "\(other.status) \(other.stderr)")
    }
}
