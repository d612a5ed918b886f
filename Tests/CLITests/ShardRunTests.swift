import CourierTestSupport
import Foundation
import Testing

/// `courier run --shard I/N` end to end: shards run side by side against the fixture server,
/// each sends only its own tasks, and their logs merge into the report, replay and `--resume`
/// of one run.
@Suite("shards")
struct ShardRunTests {
    /// 300 tasks that succeed (recorded under `key`) and 20 that fail with 404.
    static func job(key: String) -> String {
        #"""
        {"id": "ok-{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"},
         "foreach": {"n": {"range": [1, 300]}}},
        {"id": "bad-{n}", "path": "/status/404", "query": {"n": "{n}"},
         "foreach": {"n": {"range": [1, 20]}}}
        """#
    }

    static let extra = #""concurrency": 8, "retry": {"maxAttempts": 1},"#

    /// The task ids of each request line, per log file.
    static func tasksByLog(_ folder: URL) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasSuffix(".jsonl") {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            result[name] = text.split(separator: "\n").compactMap { line in
                let object =
                    try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["event"] as? String == "request" ? object?["task"] as? String : nil
            }
        }
        return result
    }

    /// The figures of `courier report --json` that a merge must keep.
    static func figures(_ paths: [String], in folder: URL) async throws -> [String: String] {
        let result = try await CourierBinary.run(["report", "--json"] + paths, directory: folder)
        #expect(result.status == 0, "\(result.stderr)")
        let root =
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let job = try #require((root?["jobs"] as? [[String: Any]])?.first)
        var figures: [String: String] = [:]
        for key in ["tasks", "requests", "retries", "attemptsPerTask", "statuses", "errorKinds"] {
            let value = job[key] ?? NSNull()
            let data = try JSONSerialization.data(
                withJSONObject: ["v": value], options: [.sortedKeys])
            figures[key] = String(decoding: data, as: UTF8.self)
        }
        return figures
    }

    @Test("four shards in parallel: each sends only its tasks, together every task once")
    func fourInParallel() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shards")
        try space.writeJob(tasks: Self.job(key: key), extra: Self.extra)
        // What each shard should run, from its dry run.
        var planned: [Int: Set<String>] = [:]
        for index in 0..<4 {
            let plan = try await CourierBinary.run(
                ["run", "job.json", "--dry-run", "--shard", "\(index)/4"], directory: space.folder)
            #expect(plan.status == 0, "\(plan.stderr)")
            planned[index] = Set(
                plan.stdout.split(separator: "\n").filter { !$0.hasPrefix("courier:") }.map {
                    String($0.split(separator: "\t")[0])
                })
            #expect(plan.stdout.contains("(shard \(index)/4: \(planned[index]!.count) of them)"))
        }
        let all = Set((1...300).map { "ok-\($0)" } + (1...20).map { "bad-\($0)" })
        #expect(planned.values.reduce(0) { $0 + $1.count } == all.count, "disjoint")
        #expect(planned.values.reduce(Set()) { $0.union($1) } == all, "a cover")

        let runs = try (0..<4).map { index in
            try CourierBinary.launch(
                [
                    "run", "job.json", "--shard", "\(index)/4", "--log-dir", space.logs.path,
                    "--no-progress",
                ],
                directory: space.folder)
        }
        for (index, run) in runs.enumerated() {
            let (status, output) = await run.wait(seconds: 120)
            let failed = planned[index]!.filter { $0.hasPrefix("bad-") }.count
            #expect(status == (failed > 0 ? 1 : 0), "\(output)")
            #expect(output.contains("e2e (shard \(index)/4): \(planned[index]!.count) tasks"))
            // Its repair is the shard's (a trial's hint ran the whole job's).
            if failed > 0 { #expect(output.contains("--resume --shard \(index)/4"), "\(output)") }
        }
        let byLog = try Self.tasksByLog(space.logs.appendingPathComponent("e2e"))
        #expect(byLog.count == 4)
        for index in 0..<4 {
            let tag = "-shard-\(index)-of-4.jsonl"
            let tasks = try #require(byLog.first { $0.key.hasSuffix(tag) }?.value, "\(tag)")
            #expect(Set(tasks) == planned[index], "shard \(index) sent exactly its own tasks")
            #expect(tasks.count == planned[index]!.count, "each once")
        }
        let starts = try space.logLines().filter { $0["event"] as? String == "run.start" }
        #expect(
            Set(
                starts.compactMap {
                    ($0["shard"] as? [String: Int]).map { "\($0["index"]!)/\($0["count"]!)" }
                })
                == ["0/4", "1/4", "2/4", "3/4"])
        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.count == 300, "the server saw every ok task once")
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/.courier/lock.shard-3-of-4").path))

        // The merged report equals a single run's figures.
        let merged = try await Self.figures(
            [space.logs.appendingPathComponent("e2e").path], in: space.folder)
        let single = space.folder.appendingPathComponent("single")
        let whole = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", single.path, "--no-progress"], directory: space.folder)
        #expect(whole.status == 1)
        let alone = try await Self.figures(
            [single.appendingPathComponent("e2e").path], in: space.folder)
        #expect(merged == alone)
        #expect(merged["tasks"]?.contains(#""failed":20"#) == true, "\(merged)")

        // Replay and --resume take every shard's log at once.
        let logs = byLog.keys.sorted().map { space.logs.appendingPathComponent("e2e/\($0)").path }
        let replay = try await CourierBinary.run(
            ["replay"] + logs + ["--dry-run"], directory: space.folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(
            replay.stdout.split(separator: "\n").filter { $0.contains("/status/404") }.count == 20)
        // In the night's own history: a repair logged elsewhere is refused (trial JJJ).
        let elsewhere = try await CourierBinary.run(
            ["run", "job.json", "--resume"] + logs + [
                "--log-dir", space.folder.appendingPathComponent("again").path, "--no-progress",
            ],
            directory: space.folder)
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("give --log-dir"))
        let resumed = try await CourierBinary.run(
            ["run", "job.json", "--resume"] + logs + ["--no-progress"], directory: space.folder)
        #expect(
            resumed.stdout.contains("320 tasks, 300 ok, 20 failed, 20 requests"),
            "\(resumed.stdout)")
        #expect(resumed.stdout.contains("(300 done by earlier runs)"))
    }

    @Test("a fan-out's parent runs on every shard; its children are split by their own ids")
    func fanOutAcrossShards() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shard-sync")
        try space.writeJob(tasks: CaptureTests.syncJob(key: key, total: 12, perPage: 5))
        var children: [String] = []
        // The plan says which of a shard's tasks every shard sends: the counts add up to more
        // than the job's (a trial could not make them add up).
        let plan = try await space.run(
            ["--shard", "0/3", "--dry-run"], backend: "curl", environment: CaptureTests.environment)
        #expect(
            plan.stdout.contains("2 of which every shard sends (they capture)"), "\(plan.stdout)")
        for index in 0..<3 {
            let result = try await space.run(
                ["--shard", "\(index)/3"], backend: "curl", environment: CaptureTests.environment)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let byLog = try Self.tasksByLog(space.logs.appendingPathComponent("e2e"))
        #expect(byLog.count == 3)
        for tasks in byLog.values {
            #expect(tasks.contains("login") && tasks.contains("users"), "producers on every shard")
            children += tasks.filter { $0.hasPrefix("user-") }
        }
        #expect(children.count == 12, "each child on one shard only")
        #expect(Set(children) == Set((1...12).map { "user-\($0)" }))
        let hits = try await ServerHits.of(key, on: space.server).requests
        #expect(hits.filter { $0.path.hasPrefix("/sync/users/") }.count == 12)
        #expect(hits.filter { $0.path.hasPrefix("/sync/login") }.count == 3)
    }

    /// `--task` over a fan-out's children on every shard, then one `--resume`: each shard
    /// counts only what it sends (a trial saw "-8 tasks, 2 ok, -10 failed" and "every task
    /// done" after shards that ran 4 of 12 children), and the repair ends as a clean run.
    @Test(
        "--task on every shard of a fan-out, then --resume: honest counts, a clean run's files",
        arguments: ["curl", "urlsession"])
    func chosenChildrenAcrossShardsThenResume(backend: String) async throws {
        let key = FixtureServer.uniqueKey("shard-task-\(backend)")
        let clean = try await CaptureTests.cleanSyncRun(key: key, backend: backend)
        defer { clean.remove() }

        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: CaptureTests.syncJob(key: key, total: 12, perPage: 5))
        for index in 0..<3 {
            let result = try await space.run(
                ["--shard", "\(index)/3", "--task", "user-1*", "--json"], backend: backend,
                environment: CaptureTests.environment)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
                    as? [String: Any])
            let tasks = try #require(summary["tasks"] as? [String: Int])
            #expect(tasks["failed"] == 0 && tasks["total"] == tasks["ok"], "\(tasks)")
            #expect((tasks["total"] ?? -1) >= 1, "\(tasks)")
            #expect(summary["historyWhole"] as? Bool == false, "\(result.stdout)")
        }
        let sent = try Self.tasksByLog(space.logs.appendingPathComponent("e2e")).values
            .flatMap { $0 }.filter { $0.hasPrefix("user-") }
        #expect(sent.sorted() == ["user-1", "user-10", "user-11", "user-12"], "each once")

        let resumed = try await space.run(
            ["--resume"], backend: backend, environment: CaptureTests.environment)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("the job's history: every task done"), "\(resumed.stdout)")
        #expect(RecoveryMatrixTests.outputs(space) == RecoveryMatrixTests.outputs(clean))
    }

    /// A trial's shard resume, its login refused, skipped none of its children not done (the
    /// listing's skip, which hands its kept ids on, was taken for another shard's) and
    /// counted one task. Each shard now skips its own children under their ids, and the
    /// shards' resumes then end as a clean run.
    @Test(
        "a shard resume whose login is refused skips its own children by id; the next ends clean",
        arguments: ["curl", "urlsession"])
    func shardResumeWithARefusedLogin(backend: String) async throws {
        let key = FixtureServer.uniqueKey("shard-refused-\(backend)")
        let job = CaptureTests.syncJob(key: key, total: 12, perPage: 5)
        let clean = try await CaptureTests.cleanSyncRun(key: key, backend: backend)
        defer { clean.remove() }

        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: job)
        for index in 0..<2 {
            let some = try await space.run(
                ["--shard", "\(index)/2", "--task", "user-1*"], backend: backend,
                environment: CaptureTests.environment)
            #expect(some.status == 0, "\(some.stderr)")
        }
        var skipped: [String] = []
        for index in 0..<2 {
            let before = Set(try space.logLines().compactMap { $0["run"] as? String })
            let refused = try await space.run(
                ["--shard", "\(index)/2", "--resume"], backend: backend,
                environment: ["SYNC_PASSWORD": "wrong"])
            #expect(refused.status == 1, "\(refused.stdout)")
            skipped += try space.logLines().filter {
                !before.contains($0["run"] as? String ?? "")
                    && $0["event"] as? String == "task.skipped"
            }.compactMap { $0["task"] as? String }
        }
        #expect(skipped.sorted() == (2...9).map { "user-\($0)" }.sorted(), "each once, by id")
        for index in 0..<2 {
            // The shard's plan says what its run does (a trial's listed the whole job's).
            let plan = try await space.run(
                ["--shard", "\(index)/2", "--resume", "--dry-run"], backend: backend,
                environment: CaptureTests.environment)
            let repaired = try await space.run(
                ["--shard", "\(index)/2", "--resume", "--json"], backend: backend,
                environment: CaptureTests.environment)
            #expect(repaired.status == 0, "\(repaired.stdout) \(repaired.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(repaired.stdout.utf8))
                    as? [String: Any])
            let tasks = try #require(summary["tasks"] as? [String: Int])
            let requests = summary["requests"] as? Int ?? -1
            #expect(
                plan.stdout.contains(
                    "(shard \(index)/2): resume: \(requests) task\(requests == 1 ? "" : "s") to send, \(tasks["alreadyDone"] ?? -1) done"
                ), "\(plan.stdout) \(repaired.stdout)")
        }
        #expect(RecoveryMatrixTests.outputs(space) == RecoveryMatrixTests.outputs(clean))
    }

    /// An Indexed Job gives every pod the same `--task`: a trial's pods whose shard lacks the
    /// task exited 2, "no task of the job has a matching id".
    @Test("--task on every shard: the task's shard sends it, the others have nothing to do")
    func oneTaskOnEveryShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shard-one")
        try space.writeJob(tasks: Self.job(key: key), extra: Self.extra)
        var sent = 0
        for index in 0..<4 {
            let result = try await space.run(
                ["--shard", "\(index)/4", "--task", "ok-7", "--json"], backend: "curl")
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(!result.stderr.contains("no task of the job"), "\(result.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            sent += summary["requests"] as? Int ?? 0
        }
        #expect(sent == 1)
        #expect(try await ServerHits.of(key, on: space.server).count == 1)
    }

    /// A shard's resume that leaves other shards' tasks not done names the repair that runs
    /// them: a trial's named the shard's own `--resume --shard I/N` again, which never does.
    @Test("a shard's resume names the whole job's repair for other shards' tasks")
    func otherShardsTasksNameTheWholeRepair() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shard-hint")
        try space.writeJob(
            tasks: #"""
                {"id": "item-{n}", "path": "/flaky", "query": {"key": "\#(key)-{n}", "fail": "1"},
                 "foreach": {"n": {"range": [1, 6]}}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = try await space.run(backend: "curl")
        #expect(night.stdout.contains("6 tasks, 0 ok, 6 failed"), "\(night.stdout)")
        var left = 6
        for index in 0..<3 {
            let resume = try await space.run(
                ["--resume", "--shard", "\(index)/3"], backend: "curl")
            #expect(resume.status == 0, "\(resume.stderr)")
            let sent = try #require(
                resume.stdout.firstMatch(of: /(\d+) requests? in/).flatMap { Int($0.1) })
            left -= sent
            if left == 0 {
                #expect(resume.stdout.contains("every task done"), "\(resume.stdout)")
            } else {
                #expect(
                    resume.stdout.contains("\(left) tasks not done, \(left) of them other shards'")
                        && resume.stdout.contains("job.json --resume` runs every shard's"),
                    "\(resume.stdout)")
                #expect(
                    !resume.stdout.contains("--shard \(index)/3` runs them"), "\(resume.stdout)")
            }
        }
        #expect(left == 0)
    }

    /// `--task ID` on every shard of an Indexed Job, the task taking a login's token: only the
    /// shard that owns it logs in (the others did, for nothing).
    @Test("--task on every shard: only the owner sends the login the task needs")
    func taskOnEveryShardLogsInOnce() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shard-task-login")
        let login = FixtureServer.uniqueKey("shard-login")
        try space.writeJob(
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(login)"},
                 "json": {"user": "me", "password": "hunter22"},
                 "capture": {"token": {"json": "/access_token", "secret": true}}},
                {"id": "item-{n}", "path": "/echo", "query": {"key": "\#(key)-{n}"},
                 "auth": {"bearer": "{token}"}, "foreach": {"n": {"range": [1, 6]}}}
                """#)
        var requests = 0
        for index in 0..<3 {
            let run = try await space.run(
                ["--task", "item-4", "--shard", "\(index)/3"], backend: "curl")
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            requests += try #require(
                run.stdout.firstMatch(of: /(\d+) requests? in/).flatMap { Int($0.1) })
        }
        #expect(requests == 2, "the owner's login and item-4 only")
        #expect(try await ServerHits.of(login, on: space.server).count == 1)
        #expect(try await ServerHits.of("\(key)-4", on: space.server).count == 1)
    }

    /// The same for a fan-out's child: the shards that do not own it cannot find it without its
    /// listing, which they no longer fetch; they end with nothing to do (they exited 2, "no task
    /// matches", failing two pods of three).
    @Test("--task of a fan-out's child on every shard: the owner sends it, the others exit 0")
    func fanOutChildOnEveryShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shard-child")
        try space.writeJob(tasks: CaptureTests.syncJob(key: key, total: 12, perPage: 5))
        var owners = 0
        for index in 0..<3 {
            let run = try await space.run(
                ["--task", "user-7", "--shard", "\(index)/3"], backend: "curl",
                environment: CaptureTests.environment)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            if !run.stdout.contains(" 0 requests ") { owners += 1 }
        }
        #expect(owners == 1)
        let children = try space.logLines().filter {
            $0["event"] as? String == "request" && $0["task"] as? String == "user-7"
        }
        #expect(children.count == 1)
    }

    @Test("a shard's lock stops a second run of that shard only")
    func lockPerShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "l{n}", "path": "/status/200", "foreach": {"n": {"range": [1, 8]}}}"#)
        let lockFolder = space.folder.appendingPathComponent("out/.courier")
        try FileManager.default.createDirectory(at: lockFolder, withIntermediateDirectories: true)
        let holder = try FileLockHolder(
            path: lockFolder.appendingPathComponent("lock.shard-1-of-2").path)
        let same = try await space.run(["--shard", "1/2"], backend: "curl")
        #expect(same.status == 3, "\(same.stderr)")
        #expect(same.stderr.contains("lock.shard-1-of-2"))
        let other = try await space.run(["--shard", "0/2"], backend: "curl")
        #expect(other.status == 0, "another shard runs beside it: \(other.stderr)")
        holder.release()
    }

    @Test("a shared rate limit is divided among the shards")
    func sharedRateLimit() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "r{n}", "path": "/echo", "foreach": {"n": {"range": [1, 16]}}}"#,
            extra: #""rateLimit": {"perSecond": 16, "burst": 1, "shared": true},"#)
        let result = try await space.run(["--shard", "0/2"], backend: "curl")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try space.logLines()
        let requests = lines.filter { $0["event"] as? String == "request" }.count
        let seconds = try #require(lines.last?["durationMs"] as? Double) / 1000
        #expect(requests >= 3, "\(requests) requests")
        // 16/s shared by 2 shards is 8/s here: at least 1/8 s between requests (a little
        // less for clock rounding), where the job's own rate would allow 1/16 s.
        #expect(seconds >= Double(requests - 1) / 8 * 0.9, "\(requests) requests in \(seconds) s")
    }

    /// Trial BB: docs/kubernetes.md had each pod run `--resume --fresh-if-no-history`. From the
    /// second night on, every pod resumed the first night's history, found every task done,
    /// fetched nothing and exited 0. With `--once-per` the Job's name, each night's pods run
    /// their shards afresh, and a pod Kubernetes retries completes its own night.
    @Test("--once-per: each night's Job runs every task; a retried pod completes its night")
    func oncePerNight() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("once-per")
        func items(_ ids: ClosedRange<Int>) -> [String] { ids.map { #"{"id": \#($0)}"# } }
        try RecordsTests.set(key, items(1...6), on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "path": "/records/list", "query": {"key": "\#(key)", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/echo", "query": {"key": "\#(key)-{id}"},
                 "foreach": {"id": {"capture": "ids"}}, "save": "items/{id}.json"}
                """#)
        func pods(_ night: String, shards: [Int] = [0, 1]) async throws -> [CourierBinary.Result] {
            var results: [CourierBinary.Result] = []
            for index in shards {
                results.append(
                    try await CourierBinary.run(
                        ["run", "job.json", "--once-per", night, "--no-progress"],
                        environment: ["JOB_COMPLETION_INDEX": "\(index)", "JOB_COMPLETIONS": "2"],
                        directory: space.folder))
            }
            return results
        }
        func hits(_ id: Int) async throws -> Int {
            try await ServerHits.of("\(key)-\(id)", on: space.server).count
        }
        for result in try await pods("sync-1") {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("done by earlier runs"), "\(result.stderr)")
        }
        for id in 1...6 { #expect(try await hits(id) == 1) }
        // A retried pod of the same Job completes its own run: nothing left, nothing sent.
        let retried = try await pods("sync-1", shards: [1])[0]
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(
            retried.stderr.contains(
                "--once-per sync-1: a run with this key is in the job's history"),
            "\(retried.stderr)")
        for id in 1...6 { #expect(try await hits(id) == 1) }
        // The next night's Job: every item fetched again, the new ones too.
        try RecordsTests.set(key, items(1...8), on: space.server)
        for result in try await pods("sync-2") {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("done by earlier runs"), "\(result.stderr)")
        }
        for id in 1...6 { #expect(try await hits(id) == 2) }
        for id in 7...8 {
            #expect(try await hits(id) == 1)
            #expect(
                FileManager.default.fileExists(
                    atPath: space.folder.appendingPathComponent("out/items/\(id).json").path))
        }
        // The key is in each shard's run.start; it decides nothing else.
        let starts = try space.logLines().filter { $0["event"] as? String == "run.start" }
        #expect(starts.filter { $0["oncePer"] as? String == "sync-2" }.count == 2)
        LogContract.check(try space.logLines())
        let both = try await CourierBinary.run(
            ["run", "job.json", "--once-per", "x", "--resume"], directory: space.folder)
        #expect(both.status == 2 && both.stderr.contains("give it without --resume"))
    }

    @Test("Kubernetes' JOB_COMPLETION_INDEX picks the shard; --log-dir - writes the log to stdout")
    func kubernetesDefaults() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "k{n}", "path": "/echo", "foreach": {"n": {"range": [1, 40]}}}"#)
        let result = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", "-", "--no-progress"],
            environment: ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "2"],
            directory: space.folder)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.allSatisfy { $0 != nil }, "stdout holds nothing but JSON lines")
        let parsed = lines.compactMap { $0 }
        LogContract.check(parsed)
        #expect(parsed.first?["shard"] as? [String: Int] == ["index": 1, "count": 2])
        let tasks = parsed.filter { $0["event"] as? String == "request" }.count
        #expect(tasks > 0 && tasks < 40)
        #expect(result.stderr.contains("e2e (shard 1/2): \(tasks) tasks, \(tasks) ok"))
        #expect(!FileManager.default.fileExists(atPath: space.logs.path), "no log folder, no lock")
        let bad = try await CourierBinary.run(
            ["run", "job.json", "--dry-run"],
            environment: ["JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "2"],
            directory: space.folder)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("JOB_COMPLETION_INDEX=2 and JOB_COMPLETIONS=2"))
    }

    @Test("the Kubernetes manifests and Dockerfile pass the offline checks, and the job validates")
    func manifests() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let job = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-k8s-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: job) }
        let check = try await CourierBinary.run(
            [
                root.appendingPathComponent("Tests/Kubernetes/validate_manifests.py").path,
                root.appendingPathComponent("deploy/kubernetes").path,
                "--dockerfile", root.appendingPathComponent("Dockerfile").path,
                "--extract-job", job.path,
            ], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let validate = try await CourierBinary.run(
            ["validate", job.path], environment: ["API_TOKEN": "t0k"])
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
        #expect(validate.stdout.contains("ok (100000 tasks)"))
    }

    /// Trial GGG: a POST that captures ran on both shards of a split, and the server made
    /// two charges where the whole job makes one. A sharded run of such a job is refused
    /// before anything is sent, its dry run too; a login (its capture feeds `auth`) is not a
    /// write, and shards as before.
    @Test("a write that captures is refused on a shard, before anything is sent")
    func aCapturingWriteOnAShard() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("shardcap")
        try space.writeJob(
            tasks: #"""
                {"id": "create", "method": "POST", "path": "/charges", "query": {"key": "\#(key)"},
                 "json": {"batch": "b1"}, "capture": {"cid": {"json": "/id"}}},
                {"id": "use-{n}", "path": "/echo", "query": {"c": "{cid}", "n": "{n}"},
                 "foreach": {"n": {"range": [1, 4]}}}
                """#)
        for extra in [["--shard", "0/2"], ["--shard", "1/2", "--dry-run"]] {
            let refused = try await space.run(extra, backend: "curl")
            #expect(
                refused.status == 2
                    && refused.stderr.contains("is a write (POST) that captures values"),
                "\(extra): \(refused.stderr)")
        }
        #expect(WritesOnceRunTests.effects(space, key: key).count == 0, "nothing sent")
        #expect(try await space.run(backend: "curl").status == 0, "the whole job runs")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1)
    }

    /// Trial GGG: shard 2's pod never started while 0 and 1 ran; the night was repaired with a
    /// whole-job `--resume`, and then Kubernetes retried pod 2, which found no run with its key
    /// on its shard and ran the shard afresh: its ten writes were made twice. After a repair
    /// made since the Job's first pod, a pod of that Job completes the night; before any, it
    /// runs its shard afresh, as each pod of a Job does.
    @Test("--once-per: a pod that never ran, retried after a repair, completes its night")
    func oncePerAfterARepair() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("once-per-repair")
        try space.writeJob(
            tasks: #"""
                {"id": "c-{n}", "method": "POST", "path": "/charges", "query": {"key": "\#(key)"},
                 "json": {"n": "{n}"}, "foreach": {"n": {"range": [1, 9]}}}
                """#)
        func pod(_ index: Int, night: String = "night-1") async throws -> CourierBinary.Result {
            try await CourierBinary.run(
                ["run", "job.json", "--once-per", night, "--no-progress"],
                environment: ["JOB_COMPLETION_INDEX": "\(index)", "JOB_COMPLETIONS": "3"],
                directory: space.folder)
        }
        for index in [0, 1] { #expect(try await pod(index).status == 0) }
        let repair = try await CourierBinary.run(
            ["run", "job.json", "--resume", "--no-progress"], directory: space.folder)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 9)
        // The next night's first pod runs before it (trial HHH: the late pod then resumed
        // that night's history, and made its own night's writes again).
        #expect(try await pod(0, night: "night-2").status == 0)
        let next = WritesOnceRunTests.effects(space, key: key).count
        #expect(next == 12)
        let retried = try await pod(2)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(
            retried.stderr.contains("a run with this key is in the job's history"),
            "\(retried.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == next, "no write made twice")
    }
}
