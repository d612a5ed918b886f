import CourierTestSupport
import Foundation
import Testing

/// `capture` against the fixture server's `/sync` API (login → paged users → each user): values
/// handed from task to task, fan-out while the parent pages, secrets, skips and bad files.
@Suite("captures and fan-out")
struct CaptureTests {
    /// login (secret token) → users, paged by Link header (ids captured) → user-{id}.
    static func syncJob(key: String, total: Int = 10, perPage: Int = 3, extraList: String = "")
        -> String
    {
        #"""
        {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(key)"},
         "json": {"user": "me", "password": "${env:SYNC_PASSWORD}"},
         "capture": {"token": {"json": "/access_token", "secret": true}}},
        {"id": "users", "path": "/sync/users",
         "query": {"key": "\#(key)", "total": "\#(total)", "per_page": "\#(perPage)"\#(extraList)},
         "auth": {"bearer": "{token}"}, "paginate": {"next": {"linkHeader": "next"}},
         "capture": {"userIds": {"json": "/items/*/id"}}, "save": "users/page-{page}.json"},
        {"id": "user-{id}", "path": "/sync/users/{id}", "query": {"key": "\#(key)"},
         "foreach": {"id": {"capture": "userIds"}}, "auth": {"bearer": "{token}"},
         "conditional": true, "save": "users/{id}.json"}
        """#
    }

    static let environment = ["SYNC_PASSWORD": "hunter22"]

    /// ``syncJob(key:total:perPage:extraList:)`` (12 users, 5 a page) run once, whole, in a
    /// workspace of its own: the outputs a repair of the same job must end with.
    static func cleanSyncRun(key: String, backend: String) async throws -> JobWorkspace {
        let clean = try JobWorkspace()
        try clean.writeJob(tasks: syncJob(key: key, total: 12, perPage: 5))
        let whole = try await clean.run(backend: backend, environment: environment)
        #expect(whole.status == 0, "\(whole.stderr)")
        return clean
    }

    @Test(
        "login → pages → details on both backends; the token is in no byte; a re-run gets 304s",
        arguments: ["curl", "urlsession"])
    func loginPagesDetails(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("sync-\(backend)")
        try space.writeJob(tasks: Self.syncJob(key: key))
        let first = try await space.run(backend: backend, environment: Self.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("12 tasks, 12 ok, 0 failed"), "\(first.stdout)")
        for id in 1...10 {
            let saved = space.folder.appendingPathComponent("out/users/\(id).json")
            let body =
                try JSONSerialization.jsonObject(with: Data(contentsOf: saved)) as? [String: Any]
            #expect(body?["login"] as? String == "user\(id)")
        }
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.filter { $0.path.hasPrefix("/sync/users/") }.count == 10, "each user once")
        #expect(
            hits.filter { $0.path.hasPrefix("/sync/users/") || $0.path.hasPrefix("/sync/users?") }
                .allSatisfy { $0.header("Authorization") == "Bearer tok-\(key)-s3cr3t" },
            "the captured token reached every dependant")

        let second = try await space.run(backend: backend, environment: Self.environment)
        #expect(second.status == 0, "\(second.stderr)")
        let details = try space.logLines().filter {
            ($0["task"] as? String)?.hasPrefix("user-") == true && $0["outcome"] as? String == "ok"
        }
        #expect(
            details.filter { $0["notModified"] as? Bool == true }.count == 10,
            "the second run's 304s")

        // The token came in a body and a response header; it must be in no byte written, in
        // any form: not in logs, outputs, stdout or stderr.
        let everything =
            try space.everyWrittenByte()
            + Data((first.stdout + first.stderr + second.stdout + second.stderr).utf8)
        #expect(everything.range(of: Data("s3cr3t".utf8)) == nil)
        #expect(everything.range(of: Data("hunter22".utf8)) == nil)
        LogContract.check(try space.logLines())
    }

    @Test(
        "50 pages × 100 ids: 5,000 children, each once, started while the parent still pages; values past the memory limit go through the spill file"
    )
    func fanOutOverlapsPaging() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("fanout")
        try space.writeJob(
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(key)"},
                 "json": {"password": "hunter22"}, "capture": {"token": {"json": "/access_token", "secret": true}}},
                {"id": "users", "path": "/sync/users",
                 "query": {"key": "\#(key)", "total": "5000", "per_page": "100", "delay_ms": "20"},
                 "auth": {"bearer": "{token}"}, "paginate": {"next": {"linkHeader": "next"}},
                 "capture": {"userIds": {"json": "/items/*/id"}}},
                {"id": "user-{id}", "path": "/sync/users/{id}", "query": {"key": "\#(key)"},
                 "foreach": {"id": {"capture": "userIds"}}, "auth": {"bearer": "{token}"}}
                """#, extra: #""concurrency": 16,"#)
        let result = try await space.run(
            backend: "curl", environment: ["COURIER_CAPTURE_MEMORY": "300"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("5002 tasks, 5002 ok, 0 failed"), "\(result.stdout)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        let children = hits.filter { $0.path.hasPrefix("/sync/users/") }
        let ids = children.map { $0.path.dropFirst("/sync/users/".count).prefix { $0 != "?" } }
        #expect(ids.count == 5000)
        #expect(Set(ids).count == 5000, "each child exactly once")
        let wanted: Set<Substring> = Set((1...5000).map { (n: Int) in Substring(String(n)) })
        #expect(Set(ids) == wanted)
        let pages = hits.filter { $0.path.hasPrefix("/sync/users?") }.map(\.time)
        #expect(pages.count == 50)
        let firstChild = children.map(\.time).min() ?? .infinity
        #expect(
            firstChild < (pages.max() ?? 0), "children began before the last page was asked for")
        let lines = try space.logLines()
        LogContract.check(lines)
    }

    @Test("a failed input skips its dependants: logged, counted, reported, and --resume runs them")
    func failedInputSkips() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("skip")
        try space.writeJob(tasks: Self.syncJob(key: key))
        let refused = try await space.run(backend: "curl", environment: ["SYNC_PASSWORD": "wrong"])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("3 tasks, 0 ok, 3 failed"), "\(refused.stdout)")
        #expect(
            refused.stderr.contains("task users skipped: input task login"), "\(refused.stderr)")
        let skipped = try space.logLines().filter { $0["event"] as? String == "task.skipped" }
        #expect(skipped.compactMap { $0["task"] as? String }.sorted() == ["user-{id}", "users"])
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(
            hits.map(\.path).allSatisfy { $0.hasPrefix("/sync/login") }, "nothing else was sent")

        let logFolder = space.logs.appendingPathComponent("e2e").path
        let report = try await CourierBinary.run(
            ["report", "--json"]
                + (try FileManager.default.contentsOfDirectory(atPath: logFolder))
                .map { "\(logFolder)/\($0)" }.filter { $0.hasSuffix(".jsonl") })
        #expect(report.stdout.contains(#""skipped":2"#), "\(report.stdout)")

        let resumed = try await space.run(
            ["--resume"], backend: "curl", environment: Self.environment)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("12 tasks, 12 ok, 0 failed"), "\(resumed.stdout)")
    }

    @Test("a parent failing mid-paging: children of the pages that came run, the rest is one skip")
    func parentFailsMidPaging() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("midpage")
        try space.writeJob(
            tasks: Self.syncJob(key: key, extraList: #", "fail_page": "3""#),
            extra: #""retry": {"maxAttempts": 1},"#)
        let result = try await space.run(backend: "curl", environment: Self.environment)
        #expect(result.status == 1)
        #expect(result.stdout.contains("9 tasks, 7 ok, 2 failed"), "\(result.stdout)")
        #expect(result.stderr.contains("its later values are unknown"), "\(result.stderr)")
    }

    @Test(
        "a header capture feeds auth; the header is redacted in the log",
        arguments: ["curl", "urlsession"])
    func headerCapture(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("hdr-\(backend)")
        try space.writeJob(
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(key)"},
                 "json": {"password": "hunter22"}, "capture": {"session": {"header": "x-session"}}},
                {"id": "users", "path": "/sync/users", "query": {"key": "\#(key)"},
                 "auth": {"bearer": "{session}"}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.last?.header("Authorization") == "Bearer tok-\(key)-s3cr3t")
        #expect(
            try space.everyWrittenByte().range(of: Data("s3cr3t".utf8)) == nil,
            "a capture used in auth is secret without saying so")
    }

    @Test("a JSON capture of a body that is not JSON fails the task before anything is saved")
    func captureOfNonJSON() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "text", "path": "/status/200", "save": "text.txt",
                 "capture": {"v": {"json": "/v"}}},
                {"id": "use", "path": "/echo", "query": {"v": "{v}"}}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        let line = try #require(try space.attempts("text").last)
        #expect((line["error"] as? [String: String])?["kind"] == "capture", "\(line)")
        #expect(
            !FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/text.txt").path))
        #expect(result.stderr.contains("task use skipped"), "\(result.stderr)")
    }

    @Test("a {name} capture with several values cannot be one value: the dependant is skipped")
    func scalarWithManyValues() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "4", "size": "4"},
                 "capture": {"first": {"json": "/items/*/id"}}},
                {"id": "one", "path": "/echo", "query": {"v": "{first}"}}
                """#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 1)
        #expect(result.stderr.contains("found different values"), "\(result.stderr)")
        // A resume would meet the same: the run says the job must change (a trial's cron
        // proposed the same repair night after night).
        #expect(
            result.stderr.contains("1 task was skipped by the job itself"),
            "\(result.stderr)")
    }

    @Test("cycles, unknown captures and misuse are exit-2 errors naming the places")
    func badCaptureJobs() async throws {
        let cases: [(tasks: String, expected: [String])] = [
            (
                #"""
                {"id": "a", "path": "/echo", "query": {"v": "{fromB}"}, "capture": {"fromA": {"header": "ETag"}}},
                {"id": "b", "path": "/echo", "query": {"v": "{fromA}"}, "capture": {"fromB": {"header": "ETag"}}}
                """#,
                ["tasks[0]", "cycle", "tasks[1]", "fromA", "fromB"]
            ),
            (
                #"{"id": "self", "path": "/echo", "query": {"v": "{mine}"}, "capture": {"mine": {"json": "/v"}}}"#,
                ["tasks[0]", "its own capture \"mine\""]
            ),
            (
                #"{"id": "c-{x}", "path": "/echo", "foreach": {"x": {"capture": "nothing"}}}"#,
                ["tasks[0].foreach.x.capture", "no task captures \"nothing\""]
            ),
            (
                #"{"id": "d", "path": "/echo", "query": {"v": "{nowhere}"}}"#,
                ["tasks[0].query.v", "no task captures it"]
            ),
            (
                #"""
                {"id": "e", "path": "/echo", "capture": {"dup": {"json": "/a"}}},
                {"id": "f", "path": "/echo", "capture": {"dup": {"json": "/b"}}}
                """#,
                ["tasks[1].capture.dup", "tasks[0] already captures \"dup\""]
            ),
            (
                #"{"id": "g", "path": "/echo", "capture": {"t": {"json": "no-slash"}}}"#,
                ["tasks[0].capture.t.json", "JSON Pointer"]
            ),
            (
                #"{"id": "h", "path": "/echo", "save": "h.json", "capture": {"t": {"json": "/a", "secret": true}}}"#,
                ["tasks[0].capture", "may not save"]
            ),
        ]
        for (tasks, expected) in cases {
            let space = try JobWorkspace()
            defer { space.remove() }
            try space.writeJob(tasks: tasks)
            let result = try await CourierBinary.run(
                ["validate", "job.json"], directory: space.folder)
            #expect(result.status == 2, "\(tasks)")
            for text in expected {
                #expect(result.stderr.contains(text), "\(text) in \(result.stderr)")
            }
        }
    }

    /// A capture used only in a `body` or a `json` string: the task waits for it and sends its
    /// value (it went out as `{first}`, before the task that captures it had run); other
    /// braces there stay text, and a `foreach` variable is replaced as before.
    @Test("a capture used only in a body or json is waited for and sent; other braces stay")
    func captureInBody() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("bodycap")
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/slow", "query": {"ms": "300", "key": "\#(key)-list"},
                 "capture": {"first": {"json": "/slept"}}},
                {"id": "usebody", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "body": "first={first}&n={n}&lit={other} {\"a\": 1}", "foreach": {"n": [1]}},
                {"id": "usejson", "method": "POST", "path": "/echo", "query": {"key": "\#(key)"},
                 "json": {"first": "{first}", "gql": "{ user { name } }", "x": "{unknown}"}}
                """#)
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("usejson\tPOST"), "\(plan.stdout)")
        #expect(plan.stdout.contains("(uses first)"), "\(plan.stdout)")
        let run = try await space.run(backend: "curl")
        #expect(run.status == 0, "\(run.stderr)")
        let bodies = try await ServerHits.of(key, on: space.server).requests.map(\.body)
        #expect(
            Set(bodies) == [
                #"first=300&n=1&lit={other} {"a": 1}"#,
                #"{"first":"300","gql":"{ user { name } }","x":"{unknown}"}"#,
            ], "\(bodies)")
    }

    /// A secret capture too short to be searched for (under 4 bytes) stands as it is in the
    /// URL of a task that takes it: the run says so at its end, as it does for a short
    /// `${env:…}` value at its start; a long one is not warned about.
    @Test("a secret capture shorter than 4 bytes is warned about at the run's end")
    func shortSecretCapture() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        for (value, warned) in [("ab", true), ("abcdefgh", false)] {
            try space.writeJob(
                tasks: #"""
                    {"id": "login", "path": "/json", "query": {"v": "{{\"t\": \"\#(value)\"}}"},
                     "capture": {"t": {"json": "/t", "secret": true}}},
                    {"id": "use", "path": "/echo", "query": {"t": "{t}"}}
                    """#)
            let run = try await space.run(backend: "curl")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(
                run.stderr.contains(
                    "warning: 1 captured secret value was shorter than 4 characters") == warned,
                "\(value): \(run.stderr)")
        }
    }

    @Test("--dry-run shows fan-out and captures as what they are")
    func dryRun() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: Self.syncJob(key: "plan"))
        let plan = try await space.run(
            ["--dry-run"], backend: "curl", environment: Self.environment)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("captures token"), "\(plan.stdout)")
        #expect(
            plan.stdout.contains("user-{id} for each of userIds (captured by tasks[1])"),
            "\(plan.stdout)")
        // The whole URL a child goes to, the base joined to its path template.
        #expect(
            plan.stdout.contains(
                "GET \(space.server.baseURL.absoluteString)/sync/users/{id}?key=plan"),
            "\(plan.stdout)")
        #expect(!plan.stdout.contains("hunter22"))

        // A capture in a URL is shown as {name}, not percent-encoded: it is not known yet.
        try space.writeJob(
            tasks: #"""
                {"id": "login", "path": "/json", "query": {"v": "{{\"t\": \"x\"}}"},
                 "capture": {"token": {"json": "/t"}}},
                {"id": "use", "path": "/echo/{token}", "query": {"t": "{token}"}}
                """#)
        let inURL = try await space.run(["--dry-run"], backend: "curl")
        #expect(
            inURL.stdout.contains(
                "use\tGET \(space.server.baseURL.absoluteString)/echo/{token}?t={token}\t(uses token)"
            ),
            "\(inURL.stdout)")
    }
}

/// `jobs/github-sync.example.json`, run as a user would, against the fixture's GitHub-like API.
@Suite("the github-sync example job")
struct GitHubSyncExampleTests {
    @Test("runs twice: 120 users in 5 pages, then every detail is a 304 and no file changes")
    func runsTwice() async throws {
        let server = try TestServers.fixture()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-ghsync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A copy in the test's folder, which is then the job's home: outputs and logs land
        // beside it, not in the repository's jobs/.
        let job = folder.appendingPathComponent("github-sync.json").path
        try FileManager.default.copyItem(
            atPath: PackagePaths.root.appendingPathComponent("jobs/github-sync.example.json").path,
            toPath: job)
        let environment = [
            "SYNC_API": server.baseURL.absoluteString, "SYNC_USER": "me",
            "SYNC_PASSWORD": "hunter22",
        ]
        func run() async throws -> CourierBinary.Result {
            try await CourierBinary.run(
                ["run", job, "--log-dir", "logs", "--no-progress"], environment: environment,
                directory: folder)
        }
        let first = try await run()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("122 tasks, 122 ok, 0 failed"), "\(first.stdout)")
        let users = folder.appendingPathComponent("out/github-sync/users")
        let files = try FileManager.default.contentsOfDirectory(atPath: users.path)
        #expect(files.filter { $0.hasPrefix("page-") }.count == 5)
        #expect(files.filter { !$0.hasPrefix("page-") }.count == 120)
        let detail = users.appendingPathComponent("7.json")
        let before =
            try FileManager.default.attributesOfItem(atPath: detail.path)[.modificationDate]
            as? Date
        // Every user's detail, one record a line, merged by id (a string: sorted by its bytes).
        let recordsFile = folder.appendingPathComponent("out/github-sync/records/users.jsonl")
        let records = try String(contentsOf: recordsFile, encoding: .utf8)
        let expectedRecords = (1...120).map { String($0) }.sorted().map {
            #"{"id":"\#($0)","login":"user\#($0)","active":true}"# + "\n"
        }.joined()
        #expect(records == expectedRecords)

        let second = try await run()
        #expect(second.status == 0, "\(second.stderr)")
        let after =
            try FileManager.default.attributesOfItem(atPath: detail.path)[.modificationDate]
            as? Date
        #expect(before == after, "a 304 leaves the saved file alone")
        // A 304 takes its records again from the saved copy: the file has the same bytes.
        #expect(try String(contentsOf: recordsFile, encoding: .utf8) == expectedRecords)
        let report = try await CourierBinary.run(
            ["report", "--json"]
                + (try FileManager.default.contentsOfDirectory(
                    atPath: folder.appendingPathComponent("logs/github-sync").path
                ).filter { $0.hasSuffix(".jsonl") }.sorted().suffix(1).map {
                    folder.appendingPathComponent("logs/github-sync/\($0)").path
                }))
        #expect(report.stdout.contains(#""notModified":120"#), "\(report.stdout)")
        let written =
            FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
        for path in written {
            let data = FileManager.default.contents(
                atPath: folder.appendingPathComponent(path).path)
            #expect(data?.range(of: Data("s3cr3t".utf8)) == nil, "the token is in \(path)")
        }
    }
}
