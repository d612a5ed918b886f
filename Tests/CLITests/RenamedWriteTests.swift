import CourierTestSupport
import Foundation
import Testing

/// A write task renamed between a night and its repair: the history knows its write by its old
/// id and by the request it sent (`requestDigest`), so the repair does not make it again under
/// the new id (trial HHH: the charge was made twice, the new id's idempotency key another).
@Suite("renamed writes")
struct RenamedWriteTests {
    typealias Key = WritesOnceRunTests.Key
    typealias Nights = WritesOfNightsTests.Nights

    /// What night 1 left of its write: answered 201 (another task failed the night), cut
    /// while under way (killed, its outcome unknown), or answered 503 (it never happened).
    enum NightOne: String, CaseIterable, CustomTestStringConvertible {
        case answered, underWay, refused
        var testDescription: String { rawValue }
    }

    @Test(
        "a repair holds a renamed task's write that the night made, and sends one it did not",
        arguments: NightOne.allCases, [Key.standard, Key.none])
    func aRenamedWrite(night: NightOne, keyed: Key) async throws {
        // `report` fails night 1 when STATUS is 500, and is ok on the repair.
        let nights = try Nights(
            keyed: keyed, tasks: #"{"id": "report", "path": "/status/${env-public:STATUS}"},"#,
            common: ["STATUS": "500"])
        defer { nights.space.remove() }
        var environment = nights.environment(1)
        switch night {
        case .answered:
            await nights.open(1)
            let first = try await CourierBinary.run(
                ["run", "job.json", "--log-dir", nights.space.logs.path, "--no-progress"],
                environment: environment, directory: nights.space.folder)
            #expect(first.status == 1, "\(first.stderr)")
        case .underWay:
            let (_, hold) = try await nights.nightOneKilledUnderWay()
            environment = nights.environment(1, hold: hold)
        case .refused:
            try await nights.run(1, status: 1)
            await nights.open(1)
        }
        let log = try nights.firstLog()
        let before = nights.bodies()
        #expect(before.count == (night == .refused ? 0 : 1), "\(before)")
        let digests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .compactMap { line -> String? in
                guard line.contains(#""task":"charge""#) else { return nil }
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
                return (object as? [String: Any])?["requestDigest"] as? String
            }
        #expect(!digests.isEmpty && digests.allSatisfy { $0.count == 32 }, "\(digests)")

        let job = nights.space.folder.appendingPathComponent("job.json")
        let text = try String(contentsOf: job, encoding: .utf8)
        #expect(text.contains(#""id": "charge""#))
        try text.replacingOccurrences(of: #""id": "charge""#, with: #""id": "charge-renamed""#)
            .write(to: job, atomically: true, encoding: .utf8)
        environment["STATUS"] = "200"
        func repair(_ extra: [String]) async throws -> CourierBinary.Result {
            try await CourierBinary.run(
                nights.resume(log) + extra + ["--no-progress"], environment: environment,
                directory: nights.space.folder)
        }
        if night == .refused {
            let repaired = try await repair([])
            #expect(repaired.status == 0, "\(repaired.stdout)\(repaired.stderr)")
            #expect(nights.bodies() == Nights.charged([1]))
            return
        }
        let replay = [
            "replay", log, "--job", "job.json", "--log-dir", nights.space.logs.path,
            "--no-progress",
        ]
        for dry in [true, false] {
            for command in [nights.resume(log) + ["--no-progress"], replay] {
                let result = try await CourierBinary.run(
                    command + (dry ? ["--dry-run"] : []), environment: environment,
                    directory: nights.space.folder)
                // A replay sends the log's failed tasks (`charge`, which the job no longer
                // builds, or none): the renamed task is not among them. One cut under way is
                // said to be no longer built (trial OOO: told to give the --job it had).
                let told = result.stdout + result.stderr
                if command[0] == "replay", night == .underWay, dry {
                    #expect(
                        told.contains("the job no longer builds task charge (renamed or removed)"),
                        "\(told)")
                }
                guard command[0] == "run" else { continue }
                if night == .answered {
                    // Answered 2xx, with nothing else to do: done by that answer (trial QQQ:
                    // held on every repair, exit 1), the dry run counting it so.
                    #expect(
                        dry
                            ? told.contains("1 done by earlier runs")
                                && !told.contains("charge-renamed\t")
                            : result.status == 0,
                        "\(command) \(dry): \(told)")
                    continue
                }
                #expect(
                    told.contains(
                        "the same request (method, URL, body and headers) as task charge's write")
                        && told.contains("--task charge-renamed"),
                    "\(command) \(dry): \(told)")
                #expect(dry || result.status != 0, "a held write fails the repair")
            }
        }
        #expect(nights.bodies() == before, "the renamed write was not made again")
        if night == .answered {
            // Its line says why (trial SSS: `answeredByReplay`, with no replay).
            let reasons = try nights.space.logLines(job: "charges").compactMap {
                $0["reason"] as? String
            }
            #expect(reasons.contains("answeredAsAnotherTask"), "\(reasons)")
        }
        guard night == .underWay else { return }
        // Named, it is sent: the user has checked.
        let named = try await repair(["--task", "charge-renamed"])
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        #expect(nights.bodies().count == 2)
    }

    /// Trial OOO: a secret in the write's URL, rotated between the night and its repair, made
    /// the renamed write's digest another, and the write was made twice.
    @Test("a renamed write is known by its request whatever secret its URL carries")
    func aRenamedWriteWithARotatedSecret() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("renamed-secret")
        func job(_ id: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "report", "path": "/status/${env-public:STATUS}"},
                    {"id": "\#(id)", "method": "POST", "path": "/charges",
                     "query": {"key": "\#(key)", "t": "${env:TOKEN}"}, "json": {"amount": 5}}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job("charge")
        let night = try await space.run(
            backend: "curl", environment: ["STATUS": "500", "TOKEN": "secret-aaaa-1"])
        #expect(night.status == 1, "\(night.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1)
        try job("charge-renamed")
        let repair = try await space.run(
            ["--resume"], backend: "curl", environment: ["STATUS": "200", "TOKEN": "secret-bbbb-2"])
        // Done by the night's answer to `charge` (it has nothing else to do), not made again.
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1, "not made again")
    }

    /// Trial OOO: two writes' ids swapped between a night and its resume. `y`, whose write
    /// the night refused, now sends the request `x`'s write made: it was made again. Trial
    /// TTT: keyed, `y` was held as "another idempotency key", whose advice (`--task y`) made
    /// the charge twice; held either way, it was held on every repair. It is done by `x`'s
    /// answer: the request it sends was made. And `x`, whose id's write was A, now sends B,
    /// which the night refused: trial QQQ found it counted done, B never made; then it was
    /// held until named. It is sent, as the refused write is on any repair.
    @Test(
        "swapped write ids: each request made once, the repair ends every task done",
        arguments: [false, true])
    func swappedIDs(keyed: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let (a, b) = (FixtureServer.uniqueKey("swap-a"), FixtureServer.uniqueKey("swap-b"))
        let gate = FixtureServer.uniqueKey("swap-gate")
        func job(x: String, y: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "x", "method": "POST", "path": "/charges", "idempotencyKey": \#(keyed),
                     "query": {"key": "\#(x)", "fail_until": "\#(x == b ? gate : "")"}, "json": {"n": 1}},
                    {"id": "y", "method": "POST", "path": "/charges", "idempotencyKey": \#(keyed),
                     "query": {"key": "\#(y)", "fail_until": "\#(y == b ? gate : "")"}, "json": {"n": 1}}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job(x: a, y: b)
        #expect(try await space.run(backend: "curl").status == 1, "y's write refused")
        #expect(WritesOnceRunTests.effects(space, key: a).count == 1)
        try job(x: b, y: a)
        await WritesOnceRunTests.toggle(gate, on: space)
        let plan = try await space.run(["--resume", "--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("1 task to send"), "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("POST"), "\(plan.stdout)\(plan.stderr)")
        let repair = try await space.run(["--resume"], backend: "curl")
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("every task done"), "\(repair.stdout)")
        #expect(WritesOnceRunTests.effects(space, key: a).count == 1, "x's write not made again")
        #expect(WritesOnceRunTests.effects(space, key: b).count == 1, "B made once")
        let done = try space.logLines().last {
            $0["event"] as? String == "task.skipped" && $0["task"] as? String == "y"
        }
        #expect(done?["reason"] as? String == "answeredAsAnotherTask", "\(done ?? [:])")
        for _ in 1...2 {
            let again = try await space.run(["--resume"], backend: "curl")
            #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        }
        #expect(WritesOnceRunTests.effects(space, key: a).count == 1)
        #expect(WritesOnceRunTests.effects(space, key: b).count == 1)
    }

    /// Trial WWW: ids rotated after a night whose writes were answered (A), refused (B) and cut
    /// under way (C). `x`, done by A, now sends C: it had been counted done, C never sent
    /// again, exit 0. `z`, whose C was under way, now sends B: once B was made by it, `y`
    /// (now sending C) was counted done by that answer, taken for C's. Each request is judged
    /// by what became of it: C held (unknown), A done, B sent once.
    @Test(
        "rotated ids over answered, refused and cut writes: the cut one is held, not done",
        arguments: [false, true])
    func rotatedOverACutWrite(keyed: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let (a, b, c) = (
            FixtureServer.uniqueKey("cut-a"), FixtureServer.uniqueKey("cut-b"),
            FixtureServer.uniqueKey("cut-c")
        )
        let (gate, hold) = (
            FixtureServer.uniqueKey("cut-gate"), FixtureServer.uniqueKey("cut-hold")
        )
        let requests = [
            a: #""query": {"key": "\#(a)"}, "json": {"n": 1}"#,
            b: #""query": {"key": "\#(b)", "fail_until": "\#(gate)"}, "json": {"n": 2}"#,
            c: #""query": {"key": "\#(c)", "hang_until": "\#(hold)"}, "json": {"n": 3}"#,
        ]
        func job(x: String, y: String, z: String) throws {
            let tasks = [("x", x), ("y", y), ("z", z)].map { id, key in
                #"{"id": "\#(id)", "method": "POST", "path": "/charges", "idempotencyKey": \#(keyed), \#(requests[key] ?? "")}"#
            }
            try space.writeJob(
                tasks: tasks.joined(separator: ",\n"),
                extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        }
        try job(x: a, y: b, z: c)
        let night = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            night, with: SIGKILL, afterArrivals: 1, key: c, server: space.server)
        _ = await night.wait(seconds: 300)
        await WritesOnceRunTests.toggle(hold, on: space)
        await WritesOnceRunTests.toggle(gate, on: space)
        let cut = try await ServerHits.of(c, on: space.server).count
        try job(x: c, y: a, z: b)
        for round in 1...2 {
            let repair = try await space.run(["--resume"], backend: "curl")
            #expect(repair.status == 1, "\(round): \(repair.stdout)\(repair.stderr)")
            #expect(
                repair.stderr.contains("task x not sent: it sends the same request"),
                "\(round): \(repair.stderr)")
            #expect(repair.stderr.contains("no answer says what became of it"), "\(repair.stderr)")
            #expect(WritesOnceRunTests.effects(space, key: a).count == 1, "A made once")
            #expect(WritesOnceRunTests.effects(space, key: b).count == 1, "B made once")
            #expect(try await ServerHits.of(c, on: space.server).count == cut, "C not sent again")
            #expect(!repair.stdout.contains("every task done"), "\(repair.stdout)")
            // The report counts it held (trial YYY: `heldWrites` 0, `next` a resume that
            // only held it again).
            let report = try await CourierBinary.run(
                ["report", "job.json", "--json"], directory: space.folder)
            #expect(report.stdout.contains(#""heldWrites":1"#), "\(report.stdout)")
        }
        // Checked, it is named: sent as asked.
        let named = try await space.run(["--task", "x"], backend: "curl")
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        let done = try await space.run(["--resume"], backend: "curl")
        #expect(done.status == 0, "\(done.stdout)\(done.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: a).count == 1)
        #expect(WritesOnceRunTests.effects(space, key: b).count == 1)
    }

    /// Trial XXX: swapped ids, the night's B refused. A resume whose B was refused again said
    /// "every task done", and every later one sent nothing, exit 0: `t1`'s failure of B was
    /// taken back by its id's answer to A. And `replay NIGHT --job` chose the night's failed
    /// ids only, `t2` (now A, done), never `t1` (now B): exit 0, B never made.
    @Test(
        "swapped ids: a refused write stays not done until made, by resume or replay --job",
        arguments: ["resume", "replay"], [true, false])
    func swappedRefusedWriteIsRepaired(repair: String, keyed: Bool) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let (a, b) = (FixtureServer.uniqueKey("sw-a"), FixtureServer.uniqueKey("sw-b"))
        let gate = FixtureServer.uniqueKey("sw-gate")
        func job(_ first: String, _ second: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "\#(first)", "method": "POST", "path": "/charges", "idempotencyKey": \#(keyed),
                     "query": {"key": "\#(a)"}, "json": {"req": "A"}},
                    {"id": "\#(second)", "method": "POST", "path": "/charges", "idempotencyKey": \#(keyed),
                     "query": {"key": "\#(b)", "fail_until": "\#(gate)"}, "json": {"req": "B"}}
                    """#, extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        }
        try job("t1", "t2")
        #expect(try await space.run(backend: "curl").status == 1, "B refused")
        let night = try #require(try ReplayTests.logFiles(space).first)
        try job("t2", "t1")
        func repairing(_ extra: [String] = []) async throws -> CourierBinary.Result {
            if repair == "resume" {
                return try await space.run(["--resume"] + extra, backend: "curl")
            }
            return try await CourierBinary.run(
                [
                    "replay", night, "--job", "job.json", "--log-dir", space.logs.path,
                    "--no-progress",
                ]
                    + extra, directory: space.folder)
        }
        if repair == "resume" {
            // Trial YYY: without a key, the second repair counted it done by the answer to
            // the other request its id had sent, and sent nothing for ever after, exit 0.
            for _ in 1...2 {
                let refused = try await repairing()
                #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
                #expect(!refused.stdout.contains("every task done"), "\(refused.stdout)")
                let report = try await CourierBinary.run(
                    ["report", "job.json", "--json"], directory: space.folder)
                #expect(report.stdout.contains(#""complete":false"#), "\(report.stdout)")
                #expect(report.stdout.contains(#""heldWrites":0"#), "\(report.stdout)")
            }
        }
        await WritesOnceRunTests.toggle(gate, on: space)
        let plan = try await repairing(["--dry-run"])
        #expect(plan.stdout.contains("t1\tPOST"), "\(plan.stdout)\(plan.stderr)")
        let made = try await repairing()
        #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: b).count == 1, "B made once")
        #expect(WritesOnceRunTests.effects(space, key: a).count == 1, "A not made again")
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("every task done"), "\(again.stdout)")
        #expect(WritesOnceRunTests.effects(space, key: b).count == 1)
    }

    /// Trial YYY: a write held because another task's write sent its request, cut under way,
    /// and its own night refused: `report` counted no held write, and its `next` named a
    /// resume that only held it again.
    @Test("a write held for another task's cut request is a held write to the report")
    func heldForAnothersRequestIsCounted() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let (p, q) = (FixtureServer.uniqueKey("held-p"), FixtureServer.uniqueKey("held-q"))
        let (gate, hold) = (
            FixtureServer.uniqueKey("held-gate"), FixtureServer.uniqueKey("held-hold")
        )
        let requests = [
            p: #""query": {"key": "\#(p)", "fail_until": "\#(gate)"}, "json": {"n": 1}"#,
            q: #""query": {"key": "\#(q)", "hang_until": "\#(hold)"}, "json": {"n": 2}"#,
        ]
        func job(first: String, second: String) throws {
            let tasks = [("p", first), ("q", second)].map { id, key in
                #"{"id": "\#(id)", "method": "POST", "path": "/charges", \#(requests[key] ?? "")}"#
            }
            try space.writeJob(
                tasks: tasks.joined(separator: ",\n"),
                extra: #""retry": {"maxAttempts": 1}, "concurrency": 1,"#)
        }
        try job(first: p, second: q)
        let night = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        await SignalTests.signal(
            night, with: SIGKILL, afterArrivals: 1, key: q, server: space.server)
        _ = await night.wait(seconds: 300)
        await WritesOnceRunTests.toggle(hold, on: space)
        await WritesOnceRunTests.toggle(gate, on: space)
        try job(first: q, second: p)
        let repair = try await space.run(["--resume"], backend: "curl")
        #expect(repair.status == 1, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stderr.contains("task p not sent"), "\(repair.stderr)")
        let report = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        #expect(report.stdout.contains(#""heldWrites":1"#), "\(report.stdout)")
    }

    /// Trial YYY: `--task` with an id whose request another id's write made sends it again, as
    /// naming does, and had said nothing of it.
    @Test("a named write whose request another id's write made is sent, and said to be made again")
    func namedWriteMadeAsAnother() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("named-again")
        func job(_ id: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "\#(id)", "method": "POST", "path": "/charges", "query": {"key": "\#(key)"},
                     "json": {"n": 1}},
                    {"id": "down", "path": "/status/500"}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job("x")
        #expect(try await space.run(backend: "curl").status == 1)
        try job("z")
        let named = try await space.run(["--task", "z"], backend: "curl")
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        #expect(
            named.stderr.contains("task z: named, it sends the request task x's write made"),
            "\(named.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 2, "made again, as named")
    }

    /// Trial TTT: three keyed writes' ids rotated between a night (A and B made, C refused)
    /// and its repair: each repair held the write now sending B, and its advice made B
    /// twice. Each request is made once, and the repair ends every task done.
    @Test("rotated write ids: each request made once")
    func rotatedIDs() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let keys = ["a", "b", "c"].map { FixtureServer.uniqueKey("rotate-\($0)") }
        let gate = FixtureServer.uniqueKey("rotate-gate")
        func job(_ order: [String]) throws {
            let tasks = order.enumerated().map { index, key in
                #"""
                {"id": "t\#(index + 1)", "method": "POST", "path": "/charges", "idempotencyKey": true,
                 "query": {"key": "\#(key)", "fail_until": "\#(key == keys[2] ? gate : "")"}, "json": {"n": 1}}
                """#
            }
            try space.writeJob(
                tasks: tasks.joined(separator: ","), extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job(keys)
        #expect(try await space.run(backend: "curl").status == 1, "C refused")
        try job([keys[2], keys[0], keys[1]])
        await WritesOnceRunTests.toggle(gate, on: space)
        for _ in 1...2 {
            let repair = try await space.run(["--resume"], backend: "curl")
            #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
            #expect(repair.stdout.contains("every task done"), "\(repair.stdout)")
            for key in keys {
                #expect(WritesOnceRunTests.effects(space, key: key).count == 1, "\(key)")
            }
        }
    }

    /// Trial OOO: a keyed write's idempotency key took in a secret of its URL's query, so a
    /// repair with the rotated secret built another key, and held the night's refused write
    /// as "another request". The key leaves the URL's secrets out, as the docs say.
    @Test("a rotated secret in a keyed write's URL keeps its idempotency key")
    func rotatedSecretKeepsTheKey() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rotated-key")
        let gate = FixtureServer.uniqueKey("rotated-key-gate")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)", "api_key": "${env:TOKEN}"},
                 "json": {"amount": 5}, "idempotencyKey": true}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let night = try await space.run(backend: "curl", environment: ["TOKEN": "secret-aaaa-1"])
        #expect(night.status == 1, "\(night.stderr)")
        await WritesOnceRunTests.toggle(gate, on: space)
        let repair = try await space.run(
            ["--resume"], backend: "curl", environment: ["TOKEN": "secret-bbbb-2"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1)
        let keys = try space.logLines().compactMap { $0["idempotencyKey"] as? String }
        #expect(keys.count >= 2 && Set(keys).count == 1, "the same key: \(keys)")
    }

    /// Trial OOO: a replay of the log alone sent the logged write, and its line carried no
    /// `requestDigest`, as log-format.md says a write's lines do.
    @Test("a replay of the log alone logs the write's digest as the night did")
    func logOnlyReplayCarriesTheDigest() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("digest-replay")
        let gate = FixtureServer.uniqueKey("digest-replay-gate")
        try space.writeJob(
            tasks: #"""
                {"id": "charge", "method": "POST", "path": "/charges",
                 "query": {"key": "\#(key)", "fail_until": "\#(gate)"}, "json": {"amount": 5}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        await WritesOnceRunTests.toggle(gate, on: space)
        let replayed = try await CourierBinary.run(
            ["replay", log, "--no-progress"], directory: space.folder)
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
        let digests = try space.logLines().filter { $0["event"] as? String == "request" }.map {
            $0["requestDigest"] as? String
        }
        #expect(digests.count == 2 && digests[0] != nil && digests[0] == digests[1], "\(digests)")
    }

    /// Trial QQQ: two writes that differ only in a header (`X-Tenant`) were one request to the
    /// digest, and the second, added since, was held as the first renamed: never made.
    @Test("writes told apart by a header are two writes")
    func writesToldApartByAHeader() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("tenants")
        func charge(_ tenant: String) -> String {
            #"""
            {"id": "charge-\#(tenant)", "method": "POST", "path": "/charges",
             "query": {"key": "\#(key)"}, "headers": {"X-Tenant": "\#(tenant)"}, "json": {"n": 1}}
            """#
        }
        let report = #"{"id": "report", "path": "/status/${env-public:STATUS}"}"#
        try space.writeJob(
            tasks: [report, charge("a")].joined(separator: ","),
            extra: #""retry": {"maxAttempts": 1},"#)
        #expect(try await space.run(backend: "curl", environment: ["STATUS": "500"]).status == 1)
        try space.writeJob(
            tasks: [report, charge("a"), charge("b")].joined(separator: ","),
            extra: #""retry": {"maxAttempts": 1},"#)
        let repair = try await space.run(
            ["--resume"], backend: "curl", environment: ["STATUS": "200"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 2, "b's charge made once")
    }

    /// Trial RRR: the night's write refused (503), the task renamed, the resume made it under
    /// the new id; then a replay of the night's log alone sent the old id's write again, with
    /// the old key (two charges, on a server that honours keys too).
    @Test("a replay of the night's log alone does not make again what a renamed repair made")
    func logOnlyReplayAfterARenamedRepair() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("renamed-replay")
        let gate = FixtureServer.uniqueKey("renamed-replay-gate")
        func job(_ id: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "\#(id)", "method": "POST", "path": "/charges",
                     "query": {"key": "\#(key)", "fail_until": "\#(gate)"},
                     "json": {"amount": 100}, "idempotencyKey": true}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job("charge")
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try #require(try ReplayTests.logFiles(space).first)
        await WritesOnceRunTests.toggle(gate, on: space)
        try job("charge-renamed")
        #expect(try await space.run(["--resume"], backend: "curl").status == 0)
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1)
        for dry in [true, false] {
            let replayed = try await CourierBinary.run(
                ["replay", log, "--no-progress"] + (dry ? ["--dry-run"] : []),
                directory: space.folder)
            // Done by the renamed repair's answer, as the resume said (trial TTT: it exited 1
            // and its repair line would have made the write again).
            #expect(replayed.status == 0, "\(dry): \(replayed.stdout)\(replayed.stderr)")
            if dry {
                #expect(
                    replayed.stdout.contains(
                        "as task charge-renamed's write, which a 2xx answered, and it has nothing else to do: done by that answer"
                    ), "\(replayed.stdout)\(replayed.stderr)")
            }
        }
        let done = try space.logLines().last { $0["event"] as? String == "task.skipped" }
        #expect(done?["reason"] as? String == "answeredAsAnotherTask", "\(done ?? [:])")
        #expect(WritesOnceRunTests.effects(space, key: key).count == 1, "not made again")
    }
}
