import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One write a night, repaired after a later night made its own: each night's body names the
/// night, so each night's write has its own idempotency key, and a repair of an older night
/// must make that night's write once, whatever the later nights, replays and repairs did
/// (trials ZZ, AAA, BBB: a repair took a later night's answer for the older night's write and
/// never made it, or made it twice after a replay of the log alone).
@Suite("writes of several nights")
struct WritesOfNightsTests {
    typealias Key = WritesOnceRunTests.Key

    /// A job `charges` whose write `charge` sends `{"night": NIGHT}`, failed with 503 until
    /// the night's gate is open (`GATE`, a toggle of the fixture server), and held until the
    /// toggle `HOLD` is on when it names one; the charges it made are kept by the fixture
    /// under `key`.
    struct Nights {
        let space: JobWorkspace
        let key = FixtureServer.uniqueKey("charges-nights")
        let gate = FixtureServer.uniqueKey("charges-nights-gate")
        var folder: URL { space.logs.appendingPathComponent("charges") }

        /// Variables every night's environment has besides its own.
        let common: [String: String]

        /// `tasks`: tasks before the write (a login); `more`: members added to it; `common`:
        /// variables of every night's environment.
        init(
            keyed: Key = .standard, tasks: String = "", more: String = "",
            common: [String: String] = [:]
        ) throws {
            self.common = common
            space = try JobWorkspace()
            try space.writeJob(
                name: "charges",
                tasks: tasks + #"""
                    {"id": "charge", "method": "POST", "path": "/charges",
                     "query": {"key": "\#(key)", "fail_until": "${env-public:GATE}",
                               "hang_until": "${env-public:HOLD}"\#(keyed.query)},
                     "json": {"night": "${env-public:NIGHT}"}\#(keyed.jobMember)\#(more)}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }

        func environment(_ night: Int, hold: String = "") -> [String: String] {
            ["NIGHT": String(night), "GATE": "\(gate)-\(night)", "HOLD": hold].merging(common) {
                mine, _ in mine
            }
        }

        /// The fixture answers night `night`'s write from now on.
        func open(_ night: Int) async {
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(gate)-\(night)"))
        }

        /// The night's run; it exits `status`.
        func run(_ night: Int, status: Int32) async throws {
            let result = try await space.run(backend: "curl", environment: environment(night))
            #expect(result.status == status, "night \(night): \(result.stderr)")
        }

        /// Night 1, its write failed (its gate shut), then night 2, answered: night 1's log.
        func nightOneFailedNightTwoAnswered() async throws -> String {
            try await run(1, status: 1)
            let log = try firstLog()
            await open(2)
            try await run(2, status: 0)
            return log
        }

        /// Night 1 killed while its write was under way (the server took it, its answer held
        /// until the toggle `hold`, switched on after the kill): night 1's log, and `hold`,
        /// which night 1's environment names.
        func nightOneKilledUnderWay() async throws -> (log: String, hold: String) {
            await open(1)
            let hold = FixtureServer.uniqueKey("charges-nights-hold")
            let running = try CourierBinary.launch(
                ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
                environment: environment(1, hold: hold), directory: space.folder)
            await SignalTests.signal(
                running, with: SIGKILL, afterArrivals: 1, key: key, server: space.server)
            _ = await running.wait(seconds: 300)
            _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(hold)"))
            return (try firstLog(), hold)
        }

        /// The first log of the folder: night 1's.
        func firstLog() throws -> String {
            let name = try #require(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().first)
            return folder.appendingPathComponent(name).standardizedFileURL.path
        }

        /// `courier ARGUMENTS` in the job's folder, as night `night`.
        func courier(_ arguments: [String], night: Int) async throws -> CourierBinary.Result {
            try await CourierBinary.run(
                arguments + ["--no-progress"], environment: environment(night),
                directory: space.folder)
        }

        func resume(_ log: String) -> [String] {
            ["run", "job.json", "--log-dir", space.logs.path, "--resume", log]
        }

        /// The bodies of the charges made, in order.
        func bodies() -> [String] {
            let effects = BlockingFetch.json(space.server.url("/charges/effects?key=\(key)"))
            return (effects?["charges"] as? [[String: Any]] ?? []).compactMap {
                $0["body"] as? String
            }
        }

        static func charged(_ nights: [Int]) -> [String] {
            nights.map { #"{"night":"\#($0)"}"# }
        }
    }

    /// Night 1's write failed, night 2's was answered: the first repair of night 1, a
    /// `--resume` of its log or a replay of it, makes night 1's write with its key; the other
    /// repair then finds it answered (trial ZZ: night 2's answer stood for it).
    @Test(
        "a repair of a failed night sends its write though a later night's write was answered",
        arguments: ["resume", "replay"])
    func aLaterNightsWriteIsAnotherWrite(repair: String) async throws {
        let nights = try Nights()
        defer { nights.space.remove() }
        let log = try await nights.nightOneFailedNightTwoAnswered()
        await nights.open(1)
        let replay = ["replay", log]
        let order =
            repair == "resume" ? [nights.resume(log), replay] : [replay, nights.resume(log)]
        for (index, command) in order.enumerated() {
            let result = try await nights.courier(command, night: 1)
            let told = result.stdout + result.stderr
            #expect(result.status == 0, "\(command): \(told)")
            // Sent by the first repair; done by its answer, and not sent, for the second.
            #expect(told.contains(index == 0 ? "1 request" : "0 requests"), "\(command): \(told)")
            if index == 1 { #expect(told.contains("(1 done by earlier runs)"), "\(told)") }
        }
        #expect(nights.bodies() == Nights.charged([2, 1]))
    }

    /// A replay of night 1's log alone and night 2, with either key header: the replay's
    /// lines carry the key it sent, and a repair reads the runs since the log it repairs.
    /// `failedFirst`: night 2 ran, then the replay failed (the resume makes night 1's write);
    /// else the replay made it before night 2 (no repair makes it again). Trial AAA: the
    /// replay's lines had no key, and a repair either never made the write or made it twice.
    @Test(
        "a replay of the night's log alone and the next night: the repair makes the night's write once",
        arguments: [true, false], [Key.standard, .custom])
    func aLogOnlyReplayAndTheNextNight(failedFirst: Bool, keyed: Key) async throws {
        let nights = try Nights(keyed: keyed)
        defer { nights.space.remove() }
        try await nights.run(1, status: 1)
        let log = try nights.firstLog()
        func nextNight() async throws {
            await nights.open(2)
            try await nights.run(2, status: 0)
        }
        if failedFirst { try await nextNight() } else { await nights.open(1) }
        let replayed = try await nights.courier(["replay", log], night: 1)
        #expect(replayed.status == (failedFirst ? 1 : 0), "\(replayed.stderr)")
        if failedFirst { await nights.open(1) } else { try await nextNight() }
        let expected = Nights.charged(failedFirst ? [2, 1] : [1, 2])
        for (index, command) in [nights.resume(log), nights.resume(log), ["replay", log]]
            .enumerated()
        {
            let result = try await nights.courier(command, night: 1)
            #expect(result.status == 0, "\(command): \(result.stdout)\(result.stderr)")
            let sends = failedFirst && index == 0 ? "1 request" : "0 requests"
            #expect(result.stdout.contains(sends), "\(command): \(result.stdout)")
            #expect(nights.bodies() == expected, "after \(command)")
        }
    }

    /// A repair of night 1 whose write fails again names its own repair, night 1's log, not
    /// "the job's history: every task done" (night 2's), and so does `report` of either log
    /// (trials AAA, BBB, DDD). The repair it names makes the write.
    @Test("a failed repair of an older night's write names the repair that makes it")
    func anOlderNightsFailedRepair() async throws {
        let nights = try Nights()
        defer { nights.space.remove() }
        let log = try await nights.nightOneFailedNightTwoAnswered()
        let again = try await nights.courier(nights.resume(log), night: 1)
        #expect(again.status == 1, "\(again.stderr)")
        #expect(!again.stdout.contains("every task done"), "\(again.stdout)")
        let repair = try #require(
            again.stdout.components(separatedBy: "; to repair: ").last?
                .trimmingCharacters(in: .whitespacesAndNewlines), "\(again.stdout)")
        #expect(repair.hasSuffix("--resume \(log)"), "\(again.stdout)")
        let report = try await CourierBinary.run(["report", log], directory: nights.space.folder)
        #expect(report.stdout.contains("--resume \(log)"), "\(report.stdout)")
        // And `report` of the failed resume's own log (trial DDD: plain `--resume`).
        let newest = try #require(
            try FileManager.default.contentsOfDirectory(atPath: nights.folder.path).sorted().last)
        let ofResume = try await CourierBinary.run(
            ["report", nights.folder.appendingPathComponent(newest).path],
            directory: nights.space.folder)
        #expect(ofResume.stdout.contains("--resume \(log)"), "\(ofResume.stdout)")
        await nights.open(1)
        let path = CourierBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"
        let repaired = try await CourierBinary.run(
            ["-c", repair + " --no-progress"], executable: URL(fileURLWithPath: "/bin/sh"),
            environment: nights.environment(1).merging(["PATH": path]) { $1 },
            directory: nights.space.folder)
        #expect(repaired.status == 0, "\(repair): \(repaired.stdout)\(repaired.stderr)")
        #expect(nights.bodies() == Nights.charged([2, 1]))
    }

    /// A keyed write that takes a login's token: the repair of night 1 logs in again and
    /// makes night 1's write. Known by its id alone before it is built, the write had been
    /// taken as held (night 2's answer), its login left out, and the write then skipped for
    /// want of the token.
    @Test("a keyed write taking a token: the repair of an older night logs in and makes it")
    func anOlderNightsKeyedWriteTakingAToken() async throws {
        let login = FixtureServer.uniqueKey("charges-token-login")
        let nights = try Nights(
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(login)"},
                 "json": {"user": "me", "password": "hunter22"},
                 "capture": {"token": {"json": "/access_token", "secret": true}}},
                """#, more: #", "auth": {"bearer": "{token}"}"#)
        defer { nights.space.remove() }
        let log = try await nights.nightOneFailedNightTwoAnswered()
        await nights.open(1)
        let plan = try await nights.courier(nights.resume(log) + ["--dry-run"], night: 1)
        #expect(
            !plan.stdout.contains("(not sent") && plan.stdout.contains("2 tasks to send"),
            "\(plan.stdout)")
        let resumed = try await nights.courier(nights.resume(log), night: 1)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            try await ServerHits.of(login, on: nights.space.server).count == 3, "one login a run")
        #expect(nights.bodies() == Nights.charged([2, 1]))
    }

    /// Night 1 killed while its write was under way, night 2 done: `report` of night 1's log
    /// names the resume of that log (trial DDD: it said `--resume`, which resumes night 2 and
    /// sends nothing).
    @Test("report of a killed older night names that night's log")
    func aKilledOlderNightsReport() async throws {
        let nights = try Nights()
        defer { nights.space.remove() }
        let (log, _) = try await nights.nightOneKilledUnderWay()
        await nights.open(2)
        try await nights.run(2, status: 0)
        let report = try await CourierBinary.run(["report", log], directory: nights.space.folder)
        #expect(report.stdout.contains("--resume \(log)"), "\(report.stdout)")
        let json = try await CourierBinary.run(
            ["report", "--json", log], directory: nights.space.folder)
        #expect(json.stdout.contains("--resume \(log)"), "\(json.stdout)")
    }

    /// A write without a key is known by its task: a resume of night 1 counts its failed
    /// write done by night 2's answer, and says so on stderr, naming the way to send it (trial
    /// AAA: it was counted "done by earlier runs" in silence).
    @Test("an unkeyed write counted done by another night's answer is said, with --task")
    func anUnkeyedWriteDoneByAnotherNight() async throws {
        let nights = try Nights(keyed: .none)
        defer { nights.space.remove() }
        let log = try await nights.nightOneFailedNightTwoAnswered()
        await nights.open(1)
        // The dry run says it as the run will (trial DDD: counted done, without the note).
        let plan = try await nights.courier(nights.resume(log) + ["--dry-run"], night: 1)
        #expect(
            plan.stdout.contains("charge\t(not sent: its write was answered 201 by run")
                && plan.stdout.contains("--task charge"), "\(plan.stdout)\(plan.stderr)")
        let resumed = try await nights.courier(nights.resume(log), night: 1)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            resumed.stderr.contains(
                "task charge not sent: its write was answered 201 by run")
                && resumed.stderr.contains("--task charge"), "\(resumed.stderr)")
        #expect(nights.bodies() == Nights.charged([2]), "not sent: documented")
    }

    /// Trial GGG: a repair run with another night's environment (cron's, the next day) built
    /// another write than the night's: a failed night's repair found night 2's write done and
    /// never made night 1's; a killed night's repair made a new charge beside the one of
    /// unknown outcome. A keyed write whose key is not the one the night sent is held, with
    /// why and how to repair it, by the resume, `replay --job` and their dry runs; repaired
    /// with the night's environment, it is made once.
    @Test(
        "a repair that builds another write than the night sent holds it, and says why",
        arguments: ["failed", "killed"])
    func aRepairWithAnotherNightsEnvironment(night1: String) async throws {
        let nights = try Nights()
        defer { nights.space.remove() }
        // Night 1's environment: a killed night's write waited on a toggle it names.
        let (log, hold) =
            night1 == "failed"
            ? (try await nights.nightOneFailedNightTwoAnswered(), "")
            : try await nights.nightOneKilledUnderWay()
        await nights.open(1)
        await nights.open(2)
        let before = nights.bodies()
        let replay = ["replay", log, "--job", "job.json", "--log-dir", nights.space.logs.path]
        for command in [nights.resume(log), replay] {
            for dry in [true, false] {
                let result = try await nights.courier(
                    command + (dry ? ["--dry-run"] : []), night: 2)
                let told = result.stdout + result.stderr
                #expect(
                    told.contains("another request (another idempotency key)")
                        && told.contains("--task charge"), "\(command) \(dry): \(told)")
            }
        }
        // As a script, the held write is a comment after its first line (trial III: the
        // comment came first, and exec refused the file).
        let script = try await nights.courier(replay + ["--dry-run", "--format", "curl"], night: 2)
        #expect(script.stdout.hasPrefix("#!/usr/bin/env bash\nset -u\n"), "\(script.stdout)")
        #expect(script.stdout.contains("# charge\t(not sent: "), "\(script.stdout)")
        #expect(nights.bodies() == before, "nothing made with night 2's environment")
        let repaired = try await CourierBinary.run(
            nights.resume(log) + ["--no-progress"], environment: nights.environment(1, hold: hold),
            directory: nights.space.folder)
        #expect(repaired.status == 0, "\(repaired.stdout)\(repaired.stderr)")
        #expect(
            nights.bodies() == (night1 == "failed" ? Nights.charged([2, 1]) : Nights.charged([1])))
    }
}
