import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Writes that happen once (issue 42, item 1), end to end against the fixture's `/charges`,
/// which makes an effect per new idempotency key as Stripe documents: the server counts
/// effects, not requests. A run is killed while a write is under way, or while the next one
/// waits for its turn, and repaired by `--resume` and `replay --job`; a write answered 2xx
/// whose expectation failed is never sent again by either, nor by a replay of the log alone.
@Suite("writes that happen once")
struct WritesOnceRunTests {
    enum Key: String, CaseIterable, CustomTestStringConvertible {
        /// `"idempotencyKey": true`: `Idempotency-Key`.
        case standard
        /// `"idempotencyKey": {"header": "X-Request-Key"}`.
        case custom
        /// No key.
        case none
        var testDescription: String { rawValue }

        var jobMember: String {
            switch self {
            case .standard: #", "idempotencyKey": true"#
            case .custom: #", "idempotencyKey": {"header": "X-Request-Key"}"#
            case .none: ""
            }
        }

        var query: String { self == .custom ? #", "header": "X-Request-Key""# : "" }
        var header: String { self == .custom ? "X-Request-Key" : "Idempotency-Key" }
    }

    /// Four charges, one at a time; charge-N's answer waits for the toggle `TOGGLE-N`.
    static func writeJob(
        _ space: JobWorkspace, key: String, toggle: String, keyed: Key, extra: String = ""
    ) throws {
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "charge-{n}", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "hang_until": "\#(toggle)-{n}"\#(keyed.query)},
                 "json": {"amount": "{n}00"}, "foreach": {"n": {"range": [1, 4]}},
                 "save": "charges/{n}.json"\#(keyed.jobMember)}
                """#,
            extra: #""concurrency": 1, "retry": {"maxAttempts": 1}, "timeout": 600, \#(extra)"#)
    }

    static func effects(_ space: JobWorkspace, key: String) -> (count: Int, pending: Int) {
        let json = BlockingFetch.json(space.server.url("/charges/effects?key=\(key)"))
        return (json?["count"] as? Int ?? -1, json?["pending"] as? Int ?? -1)
    }

    /// The idempotency keys the server was sent, request by request.
    static func sentKeys(_ space: JobWorkspace, key: String, header: String) -> [String?] {
        let requests =
            BlockingFetch.json(space.server.url("/hits?key=\(key)"))?["requests"]
            as? [[String: Any]] ?? []
        return requests.map { request in
            let headers = request["headers"] as? [[String]] ?? []
            return headers.first { $0.first?.lowercased() == header.lowercased() }?.last
        }
    }

    /// Switches the toggles on, and waits (a hang guard of 300 s) until the server has
    /// answered every write it had under way, so that a repeat gets its stored answer.
    static func release(_ space: JobWorkspace, key: String, toggles: [String]) async {
        for toggle in toggles {
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        }
        _ = await OffPool.when { Self.effects(space, key: key).pending == 0 }
    }

    /// Whether a whole line of the job's log (its run still writing) holds `wanted`.
    static func logged(_ space: JobWorkspace, _ wanted: String) -> Bool {
        let folder = space.logs.appendingPathComponent("charges")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.contains { name in
            let data = FileManager.default.contents(
                atPath: folder.appendingPathComponent(name).path)
            let text = String(decoding: data ?? Data(), as: UTF8.self)
            return text.split(separator: "\n").dropLast(text.hasSuffix("\n") ? 0 : 1).contains {
                $0.contains(wanted)
            }
        }
    }

    /// The clean run's outputs: the same job, every write answered at once.
    static func cleanOutputs(keyed: Key, backend: String) async throws -> [String: Data] {
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let key = FixtureServer.uniqueKey("charges-clean")
        let toggle = FixtureServer.uniqueKey("charge")
        await release(clean, key: key, toggles: (1...4).map { "\(toggle)-\($0)" })
        try writeJob(clean, key: key, toggle: toggle, keyed: keyed)
        let run = try await clean.run(backend: backend)
        #expect(run.status == 0, "\(run.stderr)")
        return RecoveryMatrixTests.outputs(clean)
    }

    static let killCases: [(Key, String)] = [
        (.standard, "curl"), (.standard, "urlsession"), (.custom, "curl"), (.none, "curl"),
        (.none, "urlsession"),
    ]

    /// (`--resume` is the repair here; `replaySendsAWriteLeftUnderWay` repairs the same with
    /// `replay --job`.)
    @Test(
        "a run killed while a write is under way: sent again only with its key, taken once",
        arguments: killCases)
    func killedUnderWay(keyed: Key, backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges")
        let toggle = FixtureServer.uniqueKey("charge")
        for n in [1, 2, 4] {
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)-\(n)"))
        }
        try Self.writeJob(space, key: key, toggle: toggle, keyed: keyed)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress",
            ],
            directory: space.folder)
        // Charges 1 and 2 answered; charge 3 made its effect and waits for its answer.
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 3, key: key, server: space.server)
        _ = await running.wait(seconds: 300)
        #expect(Self.effects(space, key: key).count == 3)
        let cut = try space.logLines(job: "charges")
        let started = cut.filter {
            $0["event"] as? String == "request.start" && $0["task"] as? String == "charge-3"
        }
        #expect(started.count == 1, "the write's start is on file before it went out")
        #expect((started.first?["idempotencyKey"] != nil) == (keyed != .none))
        #expect(
            !cut.contains {
                $0["event"] as? String == "request" && $0["task"] as? String == "charge-3"
            })
        await Self.release(space, key: key, toggles: ["\(toggle)-3"])
        // A replay of the log alone has the write's start only, no headers or body: refused,
        // nothing sent (trial BBB: it sent the charge again, empty and without its key).
        let folder = space.logs.appendingPathComponent("charges")
        let log = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        let alone = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(log).path, "--no-progress"],
            directory: space.folder)
        #expect(alone.status != 0, "\(alone.stdout)")
        #expect(
            alone.stderr.contains("its log line holds the request's start only"), "\(alone.stderr)")
        // Its dry run says the same (trial DDD: it said to name it).
        let alonePlan = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(log).path, "--dry-run"],
            directory: space.folder)
        #expect(
            alonePlan.status == alone.status
                && alonePlan.stderr.contains("its log line holds the request's start only"),
            "\(alonePlan.status) \(alonePlan.stdout)\(alonePlan.stderr)")
        #expect(Self.effects(space, key: key).count == 3)
        if keyed != .none {
            // The plan says where the write sent again goes, as for any task it sends.
            let plan = try await space.run(["--resume", "--dry-run"], backend: backend)
            let line = plan.stdout.split(separator: "\n").first { $0.hasPrefix("charge-3\t") }
            #expect(line?.contains("-> out/charges/3.json") == true, "\(plan.stdout)")
            #expect(line?.contains("sent again with its idempotency key") == true)
        }

        let repaired = try await space.run(["--resume"], backend: backend)
        let effects = Self.effects(space, key: key).count
        if keyed == .none {
            #expect(repaired.status == 1, "\(repaired.stderr)")
            #expect(effects == 4, "charge-3 is not sent again, charge-4 is sent")
            #expect(
                repaired.stderr.contains(
                    "task charge-3 not sent: its write went out in run"), "\(repaired.stderr)")
            #expect(repaired.stdout.contains("1 write not sent again"), "\(repaired.stdout)")
            let held = try space.logLines(job: "charges").filter {
                $0["event"] as? String == "task.skipped" && $0["task"] as? String == "charge-3"
            }
            #expect((held.last?["error"] as? [String: Any])?["kind"] as? String == "writeHeld")
            // Named, it is sent: the user has checked the server.
            let named = try await CourierBinary.run(
                [
                    "replay", "--job", "job.json", "--log-dir", space.logs.path, "--task",
                    "charge-3", "--backend", backend, "--no-progress",
                ], directory: space.folder)
            #expect(named.status == 0, "\(named.stderr)")
            #expect(Self.effects(space, key: key).count == effects + 1)
        } else {
            #expect(repaired.status == 0, "\(repaired.stderr)")
            #expect(effects == 4, "charge-3 taken once, charge-4 once")
            #expect(
                repaired.stdout.contains(
                    "1 write of unknown outcome sent again with its idempotency key"),
                "\(repaired.stdout)")
            let keys = Self.sentKeys(space, key: key, header: keyed.header)
            // charge-3 went twice with one key, and the server answered the repeat as before.
            #expect(keys.count == 5 && keys[2] != nil && keys[2] == keys[3], "\(keys)")
            #expect(Set(keys.compactMap { $0 }).count == 4)
            #expect(
                RecoveryMatrixTests.outputs(space)
                    == (try await Self.cleanOutputs(keyed: keyed, backend: backend)))
        }
        LogContract.check(try space.logLines(job: "charges"))
    }

    @Test(
        "a run killed while a write waits for its turn: the write was not sent, and goes as any task"
    )
    func killedBeforeSending() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges-wait")
        let toggle = FixtureServer.uniqueKey("charge")
        await Self.release(space, key: key, toggles: (1...4).map { "\(toggle)-\($0)" })
        // Two at once, then one a minute: charge-3 waits at the rate limit when the run dies.
        try Self.writeJob(
            space, key: key, toggle: toggle, keyed: .none,
            extra: #""rateLimit": {"perSecond": 0.0167, "burst": 2},"#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", "curl",
                "--no-progress",
            ],
            directory: space.folder)
        // Killed once charge-2's line is on file (an event, not a time).
        let logged = await OffPool.when {
            Self.logged(space, #""task":"charge-2","attempt""#)
        } then: {
            running.send(SIGKILL)
        }
        #expect(logged, "charge-2's line never came")
        _ = await running.wait(seconds: 300)
        #expect(Self.effects(space, key: key).count == 2)
        #expect(
            !(try space.logLines(job: "charges")).contains {
                $0["event"] as? String == "request.start" && $0["task"] as? String == "charge-3"
            }, "a write waiting for its turn has not started")
        // The resume's burst sends the two left at once.
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Self.effects(space, key: key).count == 4)
        #expect(!resumed.stdout.contains("write"), "\(resumed.stdout)")
    }

    @Test("a write answered 2xx whose expectation failed is not sent again by resume or replay")
    func answeredIsNeverSentAgain() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges-pending")
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "status": "pending"}, "json": {"amount": 100},
                 "expect": {"json": {"/status": "paid"}}}
                """#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stderr)")
        #expect(Self.effects(space, key: key).count == 1)
        // The repair the summary offers says it will not send this write again; so do the
        // report's next step and its JSON.
        #expect(
            first.stdout.contains(
                "--resume (it will not send again 1 failed write the server took or may have taken"),
            "\(first.stdout)")
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("charges").path])
        #expect(
            report.stdout.contains("(it will not send again 1 failed write the server took or may"),
            "\(report.stdout)")
        let json = try await CourierBinary.run(
            ["report", "--json", space.logs.appendingPathComponent("charges").path])
        #expect(json.stdout.contains(#""heldWrites":1"#), "\(json.stdout)")
        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("charges").path
            ).first)
        let repairs: [[String]] = [
            ["run", "job.json", "--log-dir", space.logs.path, "--resume"],
            ["replay", "--job", "job.json", "--log-dir", space.logs.path],
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--all"],
            ["replay", space.logs.appendingPathComponent("charges/\(log)").path],
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--task", "charg*"],
            ["run", "job.json", "--log-dir", space.logs.path, "--task", "charg*"],
        ]
        for repair in repairs {
            let plan = try await CourierBinary.run(repair + ["--dry-run"], directory: space.folder)
            #expect(
                plan.stdout.contains("charge\t(not sent: its write was answered 201 by run"),
                "\(repair): \(plan.stdout)")
            let result = try await CourierBinary.run(
                repair + ["--no-progress"], directory: space.folder)
            #expect(result.status == 1, "\(repair): \(result.stderr)")
            #expect(
                result.stderr.contains("task charge not sent: its write was answered 201 by run"),
                "\(repair): \(result.stderr)")
            #expect(Self.effects(space, key: key).count == 1, "\(repair) sent it again")
            if repair.count == 2 {
                // A replay of the log alone: its repair line says the replay holds it again
                // (trial BBB: it named the same replay, nothing more).
                #expect(
                    result.stdout.contains("(it will not send again 1 failed write"),
                    "\(result.stdout)")
            }
            if repair.contains("--resume") {
                // The repair's advice is a name, not another resume that would hold it again.
                #expect(
                    result.stdout.contains(
                        "1 task not done (1 of them held writes: stderr says why; check the server, then name each with --task ID to send it)"
                    ), "\(result.stdout)")
            }
        }
        let named = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--task", "charge"],
            directory: space.folder)
        #expect(named.status == 1, "its expectation fails again: \(named.stderr)")
        #expect(Self.effects(space, key: key).count == 2, "named, it was sent")
    }

    /// A job `charges` of one write whose night run failed (503, no effect), its server
    /// answering from now on; the charges' key.
    /// `more`: members added to the task.
    static func chargeFailedAtNight(_ space: JobWorkspace, more: String = "") async throws
        -> String
    {
        let key = FixtureServer.uniqueKey("charges-night")
        let toggle = FixtureServer.uniqueKey("charges-night-toggle")
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(toggle)"}, "json": {"amount": 100}\#(more)}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "\(night.stderr)")
        #expect(Self.effects(space, key: key).count == 0)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        return key
    }

    /// A write that failed in the night's run and was then sent by a replay: a replay of the
    /// night's log alone sent it again, since that log says it failed (trial S: a second
    /// charge). The job's history beside the log has the replay's answer.
    @Test("a replay of the night's log does not send a write a later replay sent")
    func aLaterReplaysAnswerHoldsTheWrite() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = try await Self.chargeFailedAtNight(space)
        let folder = space.logs.appendingPathComponent("charges")
        let log = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        let replayed = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(Self.effects(space, key: key).count == 1)
        // The dry run has its plan, as the run: not "no request could be rebuilt", exit 2
        // (trial AAA).
        let plan = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(log).path, "--dry-run"],
            directory: space.folder)
        #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(
            plan.stdout.contains("charge\t(not sent: its write was answered 201 by run")
                && plan.stdout.contains("0 requests to replay"), "\(plan.stdout)")
        let again = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(log).path, "--no-progress"],
            directory: space.folder)
        #expect(again.status == 0, "the job's history has it done: \(again.stderr)")
        #expect(
            again.stderr.contains("task charge not sent: its write was answered 201 by run"),
            "\(again.stderr)")
        #expect(Self.effects(space, key: key).count == 1, "charged once")
        // Done, and counted once as done: not also a held write that the summary sends the
        // reader to the log for, where no line says it (trial S counted it as both).
        let told = again.stdout + again.stderr
        #expect(told.contains("(1 done by earlier runs)"), "\(told)")
        #expect(!told.contains("not sent again"), "\(told)")
        let quiet = try await CourierBinary.run(
            ["replay", folder.appendingPathComponent(log).path, "--quiet"],
            directory: space.folder)
        #expect(
            quiet.status == 0 && (quiet.stdout + quiet.stderr).isEmpty,
            "nothing for cron: \(quiet.stdout)\(quiet.stderr)")
    }

    /// Replays the night's log alone (``chargeFailedAtNight(_:more:)``): the charge is made.
    static func replayLogAlone(_ space: JobWorkspace, key: String) async throws {
        let folder = space.logs.appendingPathComponent("charges")
        let replayed = try await CourierBinary.run(
            ["replay", folder.path + "/", "--no-progress"], directory: space.folder)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(Self.effects(space, key: key).count == 1)
    }

    /// A write that failed in the night's run and was then sent by a replay of the log alone:
    /// the history does not count that replay's `ok` (it saves nothing), so every repair held
    /// the write and exited 1 for ever, and its advice (`--task`) would have charged twice
    /// (trial S). A write with nothing else to do is done by that answer.
    @Test("a write a log-only replay sent is done for the next resume, and not sent again")
    func aLogOnlyReplaysAnswerCompletesAPlainWrite() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = try await Self.chargeFailedAtNight(space)
        try await Self.replayLogAlone(space, key: key)
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("0 tasks to send, 1 done by earlier runs"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("charge\t(not sent"), "\(plan.stdout)")
        // A replay's dry run that chose it says why it is not sent, in the run's words (trial
        // BBB: it said to name it with --task, and the replay counted it done).
        let replayPlan = try await CourierBinary.run(
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--dry-run"],
            directory: space.folder)
        #expect(
            replayPlan.stdout.contains("done by that answer")
                && !replayPlan.stdout.contains("--task"), "\(replayPlan.stdout)")
        for _ in 0..<2 {
            let resumed = try await space.run(["--resume"], backend: "curl")
            #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
            #expect(resumed.stdout.contains("every task done"), "\(resumed.stdout)")
        }
        #expect(Self.effects(space, key: key).count == 1, "charged once")
    }

    /// A keyed write with more to do than a 2xx (a save) that a replay of the log alone sent:
    /// every repair held it, exit 1, until it was named (trial U). Its key makes sending it
    /// again safe: the server answers the repeat as the first, and the resume saves it.
    @Test("a keyed write a log-only replay sent is sent again with its key, taken once, saved")
    func aLogOnlyReplaysAnswerIsHadAgainWithTheKey() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = try await Self.chargeFailedAtNight(
            space, more: #", "idempotencyKey": true, "save": "charge.json""#)
        try await Self.replayLogAlone(space, key: key)
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains(
                "-> out/charge.json\t(a replay of the log alone had its answer, and saved nothing: sent again with its idempotency key, made once only if the server honours it)"
            ), "\(plan.stdout)")
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(Self.effects(space, key: key).count == 1, "the repeat made no second charge")
        let saved = try String(
            contentsOf: space.folder.appendingPathComponent("out/charge.json"), encoding: .utf8)
        #expect(saved.contains(#""id": "ch_1""#) || saved.contains(#""id":"ch_1""#), "\(saved)")
        for _ in 0..<2 {
            let again = try await space.run(["--resume"], backend: "curl")
            #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
            #expect(again.stdout.contains(" 0 requests "), "\(again.stdout)")
        }
    }

    /// Held writes are told as failures are: the first in full, the others counted under one
    /// reason, though each names its own task (`--task charge-2`): a trial's 20 held writes
    /// printed a line apiece.
    @Test("a resume's held writes: the first in full, the rest one counted line")
    func heldWritesAreGrouped() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges-grouped")
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "charge-{n}", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "status": "pending"}, "json": {"amount": "{n}00"},
                 "foreach": {"n": {"range": [1, 3]}}, "expect": {"json": {"/status": "paid"}}}
                """#, extra: #""concurrency": 1,"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stderr)")
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 1, "\(resume.stderr)")
        let lines = resume.stderr.split(separator: "\n").filter { $0.contains("answered 201") }
        #expect(lines.count == 2, "\(resume.stderr)")
        #expect(
            lines.first?.contains("task charge-1 not sent: its write was answered 201") == true,
            "\(resume.stderr)")
        #expect(
            lines.last?.contains("2 more writes not sent again the same way: its write was") == true
                && lines.last?.contains("(--task ID)") == true, "\(resume.stderr)")
        #expect(Self.effects(space, key: key).count == 3)
    }

    /// Writes the history holds that take a login's token: the resume sends no login for
    /// them, tells them as held (they were "skipped: input task login…", and the repair line
    /// said a resume would run them), and its dry run lists them as not sent (it said
    /// "sent once token is captured again").
    @Test("held writes that take a token: no login, told as held, and the plan agrees")
    func heldWritesTakingAToken() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("held-token")
        let login = FixtureServer.uniqueKey("held-login")
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(login)"},
                 "json": {"user": "me", "password": "hunter22"},
                 "capture": {"token": {"json": "/access_token", "secret": true}}},
                {"id": "charge-{n}", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "status": "pending"}, "json": {"amount": "{n}00"},
                 "auth": {"bearer": "{token}"}, "foreach": {"n": {"range": [1, 3]}},
                 "expect": {"json": {"/status": "paid"}}}
                """#, extra: #""concurrency": 1,"#)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 1, "\(night.stderr)")
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains("charge-2\t(not sent: its write was answered 201 by run"),
            "\(plan.stdout)")
        #expect(
            plan.stdout.contains("resume: 0 tasks to send")
                && plan.stdout.contains("3 writes not sent again"), "\(plan.stdout)")
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(resume.status == 1, "\(resume.stderr)")
        #expect(
            resume.stderr.contains("task charge-1 not sent: its write was answered 201"),
            "\(resume.stderr)")
        #expect(!resume.stderr.contains("did not succeed"), "\(resume.stderr)")
        #expect(resume.stdout.contains("3 of them held writes"), "\(resume.stdout)")
        #expect(try await ServerHits.of(login, on: space.server).count == 1, "no second login")
        #expect(Self.effects(space, key: key).count == 3)
    }

    @Test("a safe POST (a login) is sent again when a resume needs what it captures")
    func safeWriteIsSentAgain() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges-login")
        let toggle = FixtureServer.uniqueKey("after-login")
        try space.writeJob(
            name: "charges",
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/charges", "query": {"key": "\#(key)"},
                 "json": {"user": "u"}, "safe": true,
                 "capture": {"session": {"json": "/id", "secret": true}}},
                {"id": "use", "path": "/toggle", "query": {"name": "\#(toggle)", "s": "{session}"}}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "\(first.stderr)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Self.effects(space, key: key).count == 2, "the login was sent again for its value")
        #expect(
            !(try space.logLines(job: "charges")).contains {
                $0["event"] as? String == "request.start"
            })
    }

    /// Trial FF: `replay` (with `--job`, `--all` too) said "nothing to replay" of a write a
    /// killed run left under way, known by its `request.start` alone, where job-file.md's table
    /// says a replay sends it again with its key. It does now, and the server takes it once.
    @Test("replay --job sends a write a killed run left under way again, with its key")
    func replaySendsAWriteLeftUnderWay() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("charges-replay")
        let toggle = FixtureServer.uniqueKey("charge")
        for n in [1, 2, 4] {
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)-\(n)"))
        }
        try Self.writeJob(space, key: key, toggle: toggle, keyed: .standard)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 3, key: key, server: space.server)
        _ = await running.wait(seconds: 300)
        await Self.release(space, key: key, toggles: ["\(toggle)-3"])
        #expect(Self.effects(space, key: key).count == 3)
        let replay = ["replay", "--job", "job.json", "--log-dir", space.logs.path]
        let plan = try await CourierBinary.run(replay + ["--dry-run"], directory: space.folder)
        #expect(plan.stdout.contains("charge-3\t"), "\(plan.stdout) \(plan.stderr)")
        let sent = try await CourierBinary.run(replay + ["--no-progress"], directory: space.folder)
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        #expect(Self.effects(space, key: key).count == 3, "the repeat is answered as the first")
        let keys = Self.sentKeys(space, key: key, header: "Idempotency-Key")
        #expect(keys.count == 4 && keys[2] != nil && keys[2] == keys[3], "\(keys)")
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("out/charges/3.json").path))
    }

    /// Trial GGG: a night's write failed, a resume made it; then `replay - < NIGHT.jsonl` and a
    /// replay of a copy of that log sent it twice more (the server had three effects), since
    /// neither log sat in the job's log folder, whose history says the resume made it. Both
    /// read the history of the folder the replay logs in.
    @Test(
        "a replay of a piped or copied log holds a write a resume made since",
        arguments: [Key.none, .standard])
    func pipedOrCopiedLog(keyed: Key) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("piped")
        let gate = FixtureServer.uniqueKey("gate")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)"\#(keyed.query)},
                 "json": {"amount": 100}\#(keyed.jobMember)}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)"))
        #expect(try await space.run(["--resume"], backend: "curl").status == 0)
        #expect(Self.effects(space, key: key).count == 1)
        let copy = space.folder.appendingPathComponent("incident-night.jsonl")
        try FileManager.default.copyItem(atPath: log, toPath: copy.path)
        // The night's log alone restored under its name in another folder's history.
        let restored = space.folder.appendingPathComponent("restored")
        let restoredLog = restored.appendingPathComponent(
            "logs/e2e/\(URL(fileURLWithPath: log).lastPathComponent)")
        try FileManager.default.createDirectory(
            at: restoredLog.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: log, toPath: restoredLog.path)
        // From the job's home, from another working folder (trial HHH: its own `logs/` was
        // taken for the history), and with `--log-dir` naming another folder for the repair.
        let elsewhere = space.folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let courier = "'\(CourierBinary.url.path)'"
        let job = space.folder.appendingPathComponent("job.json").path
        // A repair logged anywhere but the night's history is refused: a later repair there
        // would not see what it sent (trial JJJ).
        let replays: [(String, URL, Int32)] = [
            ("\(courier) replay - --log-dir logs < '\(log)'", space.folder, 0),
            ("\(courier) replay '\(copy.path)' --log-dir logs", space.folder, 0),
            ("\(courier) replay - < '\(log)'", elsewhere, 0),
            ("\(courier) replay '\(copy.path)'", elsewhere, 0),
            ("\(courier) run '\(job)' --resume '\(log)' --log-dir other", elsewhere, 2),
            ("\(courier) replay '\(log)' --job '\(job)' --log-dir other", elsewhere, 2),
            ("\(courier) replay - --log-dir other < '\(log)'", elsewhere, 2),
            // A pipe that left `run.start` out names no history (trial OOO: made again), and
            // the held replay's own log is no history of the night (trial QQQ: the second
            // replay made it); a night whose history moved away neither.
            ("grep -v '\"run.start\"' '\(log)' | \(courier) replay -", elsewhere, 1),
            ("grep -v '\"run.start\"' '\(log)' | \(courier) replay -", elsewhere, 1),
            (
                "sed 's|\(space.folder.path)|/nonexistent|g' '\(log)' | \(courier) replay -",
                elsewhere, 1
            ),
        ]
        for (command, folder, status) in replays {
            let replayed = try await CourierBinary.run(
                ["-c", command + " --no-progress"], executable: URL(fileURLWithPath: "/bin/bash"),
                directory: folder)
            #expect(replayed.status == status, "\(command): \(replayed.stdout)\(replayed.stderr)")
            if status == 2 {
                #expect(replayed.stderr.contains("--log-dir"), "\(replayed.stderr)")
            }
            if status == 1 {
                #expect(
                    replayed.stderr.contains("no history of its night is here"),
                    "\(command): \(replayed.stderr)")
            }
            #expect(Self.effects(space, key: key).count == 1, "\(command): not made again")
        }
        // The history archived away, the night's log alone restored under its name in another
        // folder's: it holds the night, not the runs since (trial RRR: made again).
        try FileManager.default.moveItem(
            at: space.logs, to: space.folder.appendingPathComponent("archive"))
        let restoredReplay = try await CourierBinary.run(
            ["replay", restoredLog.path, "--no-progress"], directory: restored)
        #expect(restoredReplay.status == 1, "\(restoredReplay.stdout)\(restoredReplay.stderr)")
        #expect(restoredReplay.stderr.contains("no history of its night is here"))
        #expect(Self.effects(space, key: key).count == 1, "restored: not made again")
    }

    /// Trial GGG: `replay LOG` (the log alone) took no lock, so a resume started beside it
    /// sent the failed night's write too: the server had two effects, in six trials of six.
    /// The replay holds the job's log folder; a resume beside it exits 3 and sends nothing.
    @Test("a replay of the log alone and a resume never run side by side")
    func replayBesideResume() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("beside")
        let gate = FixtureServer.uniqueKey("beside-gate")
        let hold = FixtureServer.uniqueKey("beside-hold")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)", "hang_until": "\#(hold)"},
                 "json": {"amount": 100}}
                """#, extra: #""retry": {"maxAttempts": 1}, "timeout": 600,"#)
        await Self.toggle(hold, on: space)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        await Self.toggle(gate, on: space)
        // The log's request waits on `hold`, which is on: the replay is given the log
        // rewritten to wait on `holdAgain`, so that it is under way when the resume starts.
        // (The resume's own request would not wait: without the lock it makes a second charge.)
        let holdAgain = FixtureServer.uniqueKey("beside-hold-2")
        let waiting = try String(contentsOfFile: log, encoding: .utf8)
            .replacingOccurrences(of: hold, with: holdAgain)
        let copy = space.logs.appendingPathComponent("e2e/replayed.jsonl.in")
        try waiting.write(to: copy, atomically: true, encoding: .utf8)
        let replay = try CourierBinary.launch(
            [
                "-c",
                "'\(CourierBinary.url.path)' replay - --log-dir logs --no-progress < '\(copy.path)'",
            ],
            executable: URL(fileURLWithPath: "/bin/bash"), directory: space.folder)
        await SignalTests.signal(replay, with: 0, afterArrivals: 2, key: key, server: space.server)
        let resume = try await space.run(["--resume"], backend: "curl")
        #expect(
            resume.status == 3
                && resume.stderr.contains("a replay of the job's log alone is going on"),
            "\(resume.stderr)")
        await Self.toggle(holdAgain, on: space)
        let replayed = await replay.wait(seconds: 300)
        #expect(replayed.status == 0, "\(replayed.output)")
        #expect(Self.effects(space, key: key).count == 1, "made once")
    }

    static func toggle(_ name: String, on space: JobWorkspace) async {
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(name)"))
    }

    /// Trial LLL: a night logged with `--log-dir X` and repaired there; then a copy of its
    /// log, replayed from another folder, read the job file's default history (`logs/`) and
    /// made the write again (Kinto: two records). The log's `run.start` says where it was
    /// written (`logDir`): the replay reads and logs there, and a resume that would log
    /// elsewhere is refused.
    @Test("a copy of a night logged with --log-dir elsewhere holds what that history made")
    func copyOfANightLoggedElsewhere() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("logged-elsewhere")
        let gate = FixtureServer.uniqueKey("logged-elsewhere-gate")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)"}, "json": {"amount": 100}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = space.folder.appendingPathComponent("night-logs")
        let job = space.folder.appendingPathComponent("job.json").path
        func courier(_ arguments: [String], in folder: URL) async throws -> CourierBinary.Result {
            try await CourierBinary.run(arguments + ["--no-progress"], directory: folder)
        }
        #expect(
            try await courier(["run", job, "--log-dir", night.path], in: space.folder).status == 1)
        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: night.appendingPathComponent("e2e").path
            ).first)
        let elsewhere = space.folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let copy = elsewhere.appendingPathComponent("night.jsonl")
        try FileManager.default.copyItem(
            at: night.appendingPathComponent("e2e/\(log)"), to: copy)
        await Self.toggle(gate, on: space)
        let repaired = try await courier(
            ["run", job, "--resume", "--log-dir", night.path], in: space.folder)
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(Self.effects(space, key: key).count == 1)
        for arguments in [["replay", copy.path], ["replay", copy.path, "--job", job]] {
            let replayed = try await courier(arguments, in: elsewhere)
            #expect(replayed.status == 0, "\(arguments): \(replayed.stdout)\(replayed.stderr)")
            #expect(Self.effects(space, key: key).count == 1, "\(arguments): not made again")
        }
        let resumed = try await courier(["run", job, "--resume", copy.path], in: elsewhere)
        #expect(
            resumed.status == 2
                && resumed.stderr.contains("give --log-dir \(night.standardizedFileURL.path)"),
            "\(resumed.stderr)")
        #expect(Self.effects(space, key: key).count == 1)
    }
}
