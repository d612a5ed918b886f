import CourierTestSupport
import Foundation
import Testing

/// `window`: a task walked over time windows, each window a task; a window that ended ok is
/// kept in the cursor file and left out later, so that a failed window is the only one fetched
/// again; `--window START..END` backfills a range.
@Suite("window")
struct WindowTests {
    /// Each window saved to a file of its own, or (`records`) merged into one file.
    static func writeJob(_ space: JobWorkspace, key: String, end: String, records: Bool = false)
        throws
    {
        let output =
            records
            ? #""records": {"from": "", "to": "days.jsonl", "write": "merge", "key": "/id"}"#
            : #""save": "days/{windowStart}.json""#
        try space.writeJob(
            tasks: #"""
                {"id": "day-{windowStart}", "path": "/records/item",
                 "query": {"key": "\#(key)", "id": "{windowStart}", "to": "{windowEnd}"},
                 "window": {"start": "2026-01-01", "end": "\#(end)", "step": "1d", "format": "date"},
                 \#(output)}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
    }

    static func days(_ range: ClosedRange<Int>, except: Int? = nil) -> [String] {
        range.filter { $0 != except }.map { #"{"id": "2026-01-0\#($0)"}"# }
    }

    /// The file name of the newest log of the job `e2e`.
    static func newestLog(_ space: JobWorkspace) throws -> String {
        try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).filter { $0.hasSuffix(".jsonl") }.sorted().last)
    }

    /// `courier replay LOG --job job.json` of the job `e2e`'s log `log`, with `extra`.
    static func replay(_ space: JobWorkspace, log: String, _ extra: [String] = []) async throws
        -> (status: Int32?, stdout: String, stderr: String)
    {
        let result = try await CourierBinary.run(
            ["replay", space.logs.appendingPathComponent("e2e/\(log)").path, "--job", "job.json"]
                + extra + ["--no-progress"], directory: space.folder)
        return (result.status, result.stdout, result.stderr)
    }

    /// The ids of the windows the newest run asked for.
    static func asked(_ space: JobWorkspace) throws -> [String] {
        let lines = try space.logLines()
        let run = lines.last { $0["event"] as? String == "run.start" }?["run"] as? String
        return lines.filter { $0["run"] as? String == run && $0["event"] as? String == "request" }
            .compactMap { $0["task"] as? String }.sorted()
    }

    @Test("a failed window is the only one fetched again; new windows come as the end moves")
    func windows() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05")
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(plan.stdout.contains("id=2026-01-01&to=2026-01-02"), "\(plan.stdout)")
        #expect(plan.stdout.contains("4 tasks"), "\(plan.stdout)")

        let first = try await space.run(backend: "curl")
        #expect(first.status == 1, "day 3 is missing upstream: \(first.stdout)")
        #expect(try Self.asked(space) == (1...4).map { "day-2026-01-0\($0)" })

        try RecordsTests.set(key, Self.days(1...6), on: space.server)
        let second = try await space.run(backend: "urlsession")
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"], "only the failed window")
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: space.folder.appendingPathComponent("out/days").path
            ).sorted() == (1...4).map { "2026-01-0\($0).json" })

        let third = try await space.run(backend: "curl")
        #expect(third.status == 0 && third.stdout.contains("0 tasks"), "\(third.stdout)")

        try Self.writeJob(space, key: key, end: "2026-01-07")
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try Self.asked(space) == ["day-2026-01-05", "day-2026-01-06"])

        // A backfill walks its own range, every window in it again.
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-03"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)\(backfill.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-01", "day-2026-01-02"])
        let bad = try await space.run(["--window", "2026-02-01..2026-01-01"], backend: "curl")
        #expect(bad.status == 2 && bad.stderr.contains("--window expects START..END"))
        // A range wholly in the future (trial NN: "0 tasks", exit 0, and a log).
        let logs = try space.logLines().count
        let ahead = try await space.run(["--window", "2099-01-01..2099-02-01"], backend: "curl")
        #expect(ahead.status == 2, "\(ahead.stdout)\(ahead.stderr)")
        #expect(ahead.stderr.contains("holds no window that has ended yet"), "\(ahead.stderr)")
        #expect(try space.logLines().count == logs, "no run, no log")
        // Off the grid, the range is put on it: 12:00 on the 3rd to the 5th is days 3 and 4.
        let snapped = try await space.run(
            ["--window", "2026-01-03T12:00:00Z..2026-01-05"], backend: "curl")
        #expect(snapped.status == 0, "\(snapped.stdout)\(snapped.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03", "day-2026-01-04"])
        // Never past now: a backfill to 2099 stops at the last whole day.
        // The count is of the days before the run's now: taken before and after it, so that
        // a day that ends while it runs (however slowly) is either count, not a failure.
        let before = Self.wholeDays(since: 1_793_491_200)
        let future = try await space.run(
            ["--window", "2026-11-01..2099-01-01", "--dry-run"], backend: "curl")
        let counts = Set([before, Self.wholeDays(since: 1_793_491_200)]).map { "\($0) tasks" }
        #expect(counts.contains { future.stdout.contains($0) }, "\(future.stdout)")
    }

    @Test("with records, a failed window holds the file; --resume fetches it alone")
    func windowsIntoRecords() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-records")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        let failed = try await space.run(backend: "curl")
        #expect(failed.status == 1)
        // The held file's repair runs as printed (trial QQ: it lacked the job file).
        let job = space.folder.appendingPathComponent("job.json").standardizedFileURL.path
        #expect(
            failed.stderr.contains("`courier run \(job) --resume` fetches the others"),
            "\(failed.stderr)")
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
        let file = space.folder.appendingPathComponent("out/days.jsonl")
        #expect(
            try String(contentsOf: file, encoding: .utf8)
                == (1...4).map { #"{"id":"2026-01-0\#($0)"}"# + "\n" }.joined())
        // Every window's records are in the file: a plain run has nothing left to fetch.
        let next = try await space.run(backend: "curl")
        #expect(next.status == 0 && next.stdout.contains("0 tasks"), "\(next.stdout)")
    }

    @Test("replay --job of a failed night keeps its windows, so the next night fetches none again")
    func replayKeepsTheNightsWindows() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-replay-night")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        #expect(try await space.run(backend: "curl").status == 1)
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        let log = try Self.newestLog(space)
        let replay = try await Self.replay(space, log: log)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
        #expect(
            try String(
                contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
                == (1...4).map { #"{"id":"2026-01-0\#($0)"}"# + "\n" }.joined())
        // Trial LL: the replay kept the window it sent alone; the next night fetched 1, 2 and 4.
        let next = try await space.run(backend: "curl")
        #expect(next.status == 0 && next.stdout.contains("0 tasks"), "\(next.stdout)")
        // The same replay again: its repair is in the job's history, and nothing is left to send
        // (trial LL: exit 1, "the job no longer builds this task", for the window it repaired).
        let again = try await Self.replay(space, log: log)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("nothing to replay"), "\(again.stdout)")
        #expect(again.stderr.contains("also read: 1 later repair of these logs"), "\(again.stderr)")
    }

    @Test("replay of a night whose failed window a later night fetched: nothing to send, exit 0")
    func replayOfAWindowFetchedSince() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-since")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05")
        #expect(try await space.run(backend: "curl").status == 1)
        let log = try Self.newestLog(space)
        try RecordsTests.set(key, Self.days(1...5), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-06")
        #expect(try await space.run(backend: "curl").status == 0)
        #expect(try Self.asked(space) == ["day-2026-01-03", "day-2026-01-05"])
        // Trial NN: refused as a task "the job no longer builds", exit 1, dry run too.
        for dry in [true, false] {
            let replay = try await Self.replay(space, log: log, dry ? ["--dry-run"] : [])
            #expect(replay.status == 0, "dry run \(dry): \(replay.stdout)\(replay.stderr)")
            #expect(
                (replay.stdout + replay.stderr).contains("1 task a later run did, not sent again"),
                "\(replay.stdout)\(replay.stderr)")
        }
    }

    /// The command after "to repair: " in a summary, as words (no word here needs quotes).
    static func repairWords(_ summary: String) throws -> [String] {
        let line = try #require(summary.split(separator: "\n").last { $0.contains("to repair: ") })
        let command = try #require(line.components(separatedBy: "to repair: ").last)
        return command.split(separator: " ").map(String.init)
    }

    @Test("a failed backfill against --base-url: its printed repair, run as printed, repairs it")
    func backfillRepairWithBaseURL() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-base")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        // The file's server is a port nothing listens on; --base-url names the fixture.
        let job = space.folder.appendingPathComponent("job.json")
        let text = try String(contentsOf: job, encoding: .utf8)
        try text.replacingOccurrences(
            of: space.server.baseURL.absoluteString,
            with: "http://127.0.0.1:\(unusedLoopbackPort())"
        ).write(to: job, atomically: true, encoding: .utf8)
        let base = ["--base-url", space.server.baseURL.absoluteString]
        let backfill = try await space.run(
            base + ["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(backfill.status == 1, "\(backfill.stdout)")
        let words = try Self.repairWords(backfill.stdout)
        #expect(words.contains("--base-url"), "\(words)")
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        // Trial PP: the log came after --base-url's value, and the command was refused.
        let repair = try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: space.folder)
        #expect(repair.status == 0, "\(words) \(repair.stdout)\(repair.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
    }

    @Test("a backfill after a failed night says the night is not done, and how to complete it")
    func backfillAfterAFailedNight() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-behind")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05")
        #expect(try await space.run(backend: "curl").status == 1, "day 3 fails")
        let night = try Self.newestLog(space)
        // Trial NN: a backfill that succeeded hid the night's failure from --resume and report.
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-02"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)")
        #expect(
            backfill.stdout.contains("before the backfill left 1 task not done")
                && backfill.stdout.contains("--resume \(space.logs.path)/e2e/\(night)"),
            "\(backfill.stdout)")
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(
            report.stdout.contains("before the backfill left 1 task not done")
                && report.stdout.contains("e2e/\(night)"), "\(report.stdout)")
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(
            resumed.stdout.contains("before the backfill left 1 task not done"),
            "\(resumed.stdout)")
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        let repair = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(night)").path], backend: "curl")
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
    }

    @Test("a night's resume leaves a failed backfill's failures standing: report names its repair")
    func nightsResumeKeepsTheBackfillsFailures() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-two-lines")
        func days(except: [Int]) -> [String] {
            Self.days(1...6).filter { day in !except.contains { day.contains("2026-01-0\($0)") } }
        }
        try RecordsTests.set(key, days(except: []), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05")
        #expect(try await space.run(backend: "curl").status == 0)
        // A backfill whose day 2 fails, then a night whose new day 5 fails.
        try RecordsTests.set(key, days(except: [2]), on: space.server)
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(backfill.status == 1, "day 2 fails: \(backfill.stdout)")
        try RecordsTests.set(key, days(except: [2, 5]), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-07")
        #expect(try await space.run(backend: "curl").status == 1, "day 5 fails")
        // The night's own repair: it walks the night's windows, not the backfill's range.
        try RecordsTests.set(key, days(except: [2]), on: space.server)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-05"])
        #expect(
            resumed.stdout.contains(
                "the backfill --window 2026-01-01..2026-01-05 left 1 task not done"),
            "\(resumed.stdout)")
        // Trial UU: the resume's end settled the backfill's failure, and report said complete.
        func report() async throws -> [String: Any] {
            let result = try await CourierBinary.run(
                ["report", "job.json", "--json"], directory: space.folder)
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
            let jobs = (object as? [String: Any])?["jobs"] as? [[String: Any]]
            return try #require(jobs?.first, "\(result.stdout)")
        }
        let after = try await report()
        #expect(after["complete"] as? Bool == false, "\(after)")
        let others = after["otherLines"] as? [[String: Any]] ?? []
        #expect(others.count == 1 && others.first?["notDone"] as? Int == 1, "\(others)")
        // The JSON's `next` is that line's repair when the history has none of its own.
        let next = try #require(after["next"] as? String, "\(after)")
        #expect(next == others.first?["next"] as? String, "\(after)")
        let words = next.split(separator: " ").map(String.init)
        // The repair, while day 2 still fails: its summary speaks of its own line (trials RR,
        // XX: "the job's history: every task done", the night's, and no repair of its own).
        let again = try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: space.folder)
        #expect(again.status == 1, "\(again.stdout)\(again.stderr)")
        #expect(!again.stdout.contains("every task done"), "\(again.stdout)")
        #expect(
            again.stdout.contains("to repair: ")
                && again.stdout.contains(
                    next.components(separatedBy: " --resume ").last ?? "?"),
            "\(again.stdout)")
        try RecordsTests.set(key, days(except: []), on: space.server)
        let repair = try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: space.folder)
        #expect(repair.status == 0, "\(next)\n\(repair.stdout)\(repair.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-02"])
        #expect(try await report()["complete"] as? Bool == true)
    }

    @Test("a backfill's repair leaves out the windows a later backfill did")
    func repairLeavesOutALaterBackfillsWindows() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-overlap")
        try RecordsTests.set(key, Self.days(1...6), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-07")
        #expect(try await space.run(backend: "curl").status == 0)
        // Backfill B fails days 1 to 3; backfill A, over days 3 and 4, succeeds after it.
        try RecordsTests.set(key, Self.days(4...6), on: space.server)
        let first = try await space.run(["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(first.status == 1, "\(first.stdout)")
        let b = try Self.newestLog(space)
        try RecordsTests.set(key, Self.days(1...6), on: space.server)
        let a = try await space.run(["--window", "2026-01-03..2026-01-05"], backend: "curl")
        #expect(a.status == 0, "\(a.stdout)\(a.stderr)")
        #expect(
            a.stdout.contains("the backfill --window 2026-01-01..2026-01-05 left 2 tasks not done"),
            "\(a.stdout)")
        // Trial VV: B's repairs sent day 3 again, which A had done.
        let replay = try await Self.replay(space, log: b, ["--dry-run"])
        #expect(
            replay.stderr.contains("1 task a later run did, not sent again"), "\(replay.stderr)")
        #expect(!replay.stdout.contains("day-2026-01-03"), "\(replay.stdout)")
        let resumed = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(b)").path], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-01", "day-2026-01-02"])
    }

    @Test("a repair of an older night leaves the newer night's failures standing")
    func olderNightsRepair() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("older-night")
        // Four items saved, and a daily report whose URL carries the night.
        try space.writeJob(
            tasks: #"""
                {"id": "item-{n}", "path": "/records/item", "query": {"key": "\#(key)", "id": "{n}"},
                 "foreach": {"n": {"range": [1, 4]}}, "save": "items/{n}.json"},
                {"id": "daily", "path": "/records/item", "query": {"key": "\#(key)", "id": "d", "night": "${env-public:NIGHT}"}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        func items(_ ids: [String]) -> [String] { ids.map { #"{"id": "\#($0)"}"# } }
        // Night A: item 4 and its daily report fail. Night B: items 1 to 3 fail.
        try RecordsTests.set(key, items(["1", "2", "3"]), on: space.server)
        #expect(try await space.run(backend: "curl", environment: ["NIGHT": "a"]).status == 1)
        let nightA = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).sorted().last)
        try RecordsTests.set(key, items(["4", "d"]), on: space.server)
        #expect(try await space.run(backend: "curl", environment: ["NIGHT": "b"]).status == 1)
        // Night A's repair from its log: item 4 night B fetched with the same request is done;
        // A's daily report is another request than B's (trial ZZ: a later night's task of
        // the same id counted as done whatever it sent).
        try RecordsTests.set(key, items(["1", "2", "3", "4", "d"]), on: space.server)
        let repair = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(nightA)").path],
            backend: "curl", environment: ["NIGHT": "a"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(try WindowTests.asked(space) == ["daily"], "\(repair.stdout)")
        // Trial ZZ: the report said complete, night B's items 1 to 3 never repaired.
        let report = try await ShardedBackfillTests.reportJSON(space)
        #expect(report["complete"] as? Bool == false, "\(report)")
        #expect(report["notDone"] as? Int == 3, "\(report)")
    }

    @Test("a backfill's listing checkpoint older than a night's file: its resume starts at page 1")
    func staleListingCheckpoint() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-listing")
        let toggle = FixtureServer.uniqueKey("window-listing-toggle")
        func put(_ records: [(Int, String, String)]) async throws {
            let json = records.map {
                #"{"id": \#($0.0), "updated_at": "\#($0.1)", "name": "\#($0.2)"}"#
            }
            var components = URLComponents(
                url: space.server.url("/store/put"), resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "key", value: key)]
            try await ProbeClient().post(
                components.url!, json: Data("[\(json.joined(separator: ","))]".utf8))
        }
        func writeJob(end: String) throws {
            // Pages of 2: day 1 is one page, day 2 two, whose second fails until the toggle.
            try space.writeJob(
                tasks: #"""
                    {"id": "day-{windowStart}", "path": "/store/items",
                     "query": {"key": "\#(key)", "from": "{windowStart}", "before": "{windowEnd}", "size": "2",
                               "fail_page": "2", "fail_until": "\#(toggle)"},
                     "paginate": {"next": {"linkHeader": "next"}},
                     "window": {"start": "2026-01-01T00:00:00Z", "end": "\#(end)", "step": "1d"},
                     "records": {"from": "/items/*", "to": "items.jsonl", "write": "merge", "key": "/id"}}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try await put([
            (1, "2026-01-01T01:00:00Z", "a"), (2, "2026-01-01T02:00:00Z", "b"),
            (5, "2026-01-02T01:00:00Z", "e"), (6, "2026-01-02T02:00:00Z", "f"),
            (7, "2026-01-02T03:00:00Z", "g"), (8, "2026-01-02T04:00:00Z", "h"),
        ])
        try writeJob(end: "2026-01-03T00:00:00Z")
        // The first night: day 2's second page fails, and --resume completes the night.
        #expect(try await space.run(backend: "curl").status == 1)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(toggle)"))
        #expect(try await space.run(["--resume"], backend: "curl").status == 0)
        // A backfill with a new fault: day 2's first page is kept, its second fails.
        let fault = FixtureServer.uniqueKey("window-listing-fault")
        let job = space.folder.appendingPathComponent("job.json")
        try String(contentsOf: job, encoding: .utf8).replacingOccurrences(of: toggle, with: fault)
            .write(to: job, atomically: true, encoding: .utf8)
        let backfill = try await space.run(
            ["--window", "2026-01-01..2026-01-03"], backend: "curl")
        #expect(backfill.status == 1, "\(backfill.stdout)")
        let backfillLog = try Self.newestLog(space)
        // Upstream, 6 moves to day 3 and changes; the night writes it.
        try await put([(6, "2026-01-03T02:00:00Z", "f2"), (9, "2026-01-03T03:00:00Z", "i")])
        try String(contentsOf: job, encoding: .utf8).replacingOccurrences(
            of: "2026-01-03T00:00:00Z", with: "2026-01-04T00:00:00Z"
        ).write(to: job, atomically: true, encoding: .utf8)
        #expect(try await space.run(backend: "curl").status == 0)
        // Trial PP: the resume went on from day 2's kept page, and 6 went back to "f". Its
        // plan says it starts at page 1.
        let plan = try await space.run(
            [
                "--resume", space.logs.appendingPathComponent("e2e/\(backfillLog)").path,
                "--dry-run",
            ],
            backend: "curl")
        #expect(!plan.stdout.contains("goes on from page"), "\(plan.stdout)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(fault)"))
        let resumed = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(backfillLog)").path],
            backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stderr.contains("are older than their file"), "\(resumed.stderr)")
        let lines = try String(
            contentsOf: space.folder.appendingPathComponent("out/items.jsonl"), encoding: .utf8
        ).split(separator: "\n")
        #expect(lines.count == 7, "\(lines)")
        #expect(
            lines.contains { $0.contains(#""id":6"#) && $0.contains(#""name":"f2""#) }, "\(lines)")
    }

    @Test("two failed backfills and a night: each is named until repaired, in JSON too")
    func twoFailedBackfills() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-two")
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        #expect(try await space.run(backend: "curl").status == 0)
        func newestLog() throws -> String {
            try Self.newestLog(space)
        }
        try RecordsTests.set(key, Self.days(1...4, except: 2), on: space.server)
        #expect(
            try await space.run(["--window", "2026-01-01..2026-01-03"], backend: "curl").status == 1
        )
        let first = try newestLog()
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        #expect(
            try await space.run(["--window", "2026-01-03..2026-01-05"], backend: "curl").status == 1
        )
        let second = try newestLog()
        // Trial RR: the night named the second alone, and once it was repaired, nothing did.
        try RecordsTests.set(key, Self.days(1...5, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-06", records: true)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 0, "\(night.stdout)")
        for (window, log) in [
            ("2026-01-01..2026-01-03", first), ("2026-01-03..2026-01-05", second),
        ] {
            #expect(
                night.stdout.contains("the backfill --window \(window) left 1 task not done")
                    && night.stdout.contains(log), "\(night.stdout)")
        }
        let json = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        let object =
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let report = try #require((object?["jobs"] as? [[String: Any]])?.first)
        #expect(report["complete"] as? Bool == false, "\(json.stdout)")
        #expect((report["otherLines"] as? [[String: Any]])?.count == 2, "\(json.stdout)")
        // The second repaired: the first is still named; then both.
        try RecordsTests.set(key, Self.days(1...5), on: space.server)
        let repairSecond = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(second)").path], backend: "curl")
        #expect(repairSecond.status == 0, "\(repairSecond.stdout)\(repairSecond.stderr)")
        #expect(repairSecond.stdout.contains(first), "\(repairSecond.stdout)")
        #expect(!repairSecond.stdout.contains(second), "\(repairSecond.stdout)")
        let repairFirst = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(first)").path], backend: "curl")
        #expect(repairFirst.status == 0, "\(repairFirst.stdout)\(repairFirst.stderr)")
        let done = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        #expect(done.stdout.contains(#""complete":true"#), "\(done.stdout)")
        #expect(
            try String(
                contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
                == (1...5).map { #"{"id":"2026-01-0\#($0)"}"# + "\n" }.joined())
    }

    @Test("a backfill that fetched a failed night's window: the night is not said to be not done")
    func backfillCoversTheNight() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-covers")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05")
        #expect(try await space.run(backend: "curl").status == 1, "day 3 fails")
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        // Trial RR: its summary and report named the night's repair, which did nothing.
        let backfill = try await space.run(["--window", "2026-01-02..2026-01-04"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)")
        #expect(!backfill.stdout.contains("not done"), "\(backfill.stdout)")
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(!report.stdout.contains("not done"), "\(report.stdout)")
    }

    @Test("a replay of a backfill that fails again names the backfill's log in its repair")
    func failedReplayOfABackfill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-replay-again")
        _ = try await Self.nightThenChange(space, key: key)
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-04"], backend: "curl")
        #expect(backfill.status == 1, "day 3 failed: \(backfill.stdout)")
        let log = try Self.newestLog(space)
        let replay = try await Self.replay(space, log: log)
        #expect(replay.status == 1, "day 3 fails again: \(replay.stdout)")
        // Trial RR: it named the replay's own log, whose resume fetched every window again.
        let start = try #require(replay.stdout.range(of: "(`courier run "))
        let end = try #require(
            replay.stdout.range(of: "` runs it)", range: start.upperBound..<replay.stdout.endIndex))
        let words =
            ["courier", "run"]
            + replay.stdout[start.upperBound..<end.lowerBound].split(separator: " ").map(
                String.init)
        #expect(words.last?.hasSuffix(log) == true, "\(words)")
        try RecordsTests.set(
            key,
            Self.days(1...4).map { $0.contains("01-01") ? #"{"id": "2026-01-01", "v": 2}"# : $0 },
            on: space.server)
        let repair = try await CourierBinary.run(
            Array(words.dropFirst()) + ["--no-progress"], directory: space.folder)
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
    }

    @Test("a backfill that did a failed night's window: the night's held records are named")
    func backfillLeavesTheNightsRecordsHeld() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-held")
        try RecordsTests.set(key, Self.days(1...4, except: 3), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        #expect(try await space.run(backend: "curl").status == 1, "day 3 fails")
        let night = try Self.newestLog(space)
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        // Trial SS: the backfill wrote days 2 and 3; days 1 and 4 stayed in the night's parts
        // while the summary, the report and --resume said every task was done.
        let backfill = try await space.run(["--window", "2026-01-02..2026-01-04"], backend: "curl")
        #expect(backfill.status == 0, "\(backfill.stdout)")
        #expect(
            backfill.stdout.contains(
                "before the backfill left the records of 2 tasks out of their file")
                && backfill.stdout.contains(night), "\(backfill.stdout)")
        let json = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        #expect(json.stdout.contains(#""heldRecords":2"#), "\(json.stdout)")
        #expect(json.stdout.contains(#""complete":false"#), "\(json.stdout)")
        let repair = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(night)").path], backend: "curl")
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(
            try String(
                contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
                == (1...4).map { #"{"id":"2026-01-0\#($0)"}"# + "\n" }.joined())
        let done = try await CourierBinary.run(
            ["report", "job.json", "--json"], directory: space.folder)
        #expect(done.stdout.contains(#""complete":true"#), "\(done.stdout)")
    }

    /// A night over days 1…4, then upstream day 1 changed and day 3 gone (a backfill then fails
    /// day 3); the records upstream now.
    static func nightThenChange(_ space: JobWorkspace, key: String) async throws -> [String] {
        try RecordsTests.set(key, Self.days(1...4), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-05", records: true)
        #expect(try await space.run(backend: "curl").status == 0)
        var changed = Self.days(1...4, except: 3)
        changed[0] = #"{"id": "2026-01-01", "v": 2}"#
        try RecordsTests.set(key, changed, on: space.server)
        return changed
    }

    /// The records file once the backfill after ``nightThenChange(_:key:)`` is whole.
    static let backfilled =
        #"{"id":"2026-01-01","v":2}"# + "\n"
        + (2...4).map { #"{"id":"2026-01-0\#($0)"}"# + "\n" }.joined()

    @Test("a --resume of a backfill completes that backfill, its window read from the log")
    func resumeOfABackfill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-backfill")
        let changed = try await Self.nightThenChange(space, key: key)
        // A resume of a run over the job's own windows takes no range (trial JJ: it had mixed
        // the two, and said every task was done).
        let mixed = try await space.run(
            ["--resume", "--window", "2026-01-01..2026-01-03"], backend: "curl")
        #expect(mixed.status == 2, "\(mixed.stdout)\(mixed.stderr)")
        #expect(mixed.stderr.contains("which walked the job's own windows"), "\(mixed.stderr)")
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(backfill.status == 1, "day 3 failed: \(backfill.stdout)")
        try RecordsTests.set(key, changed + [#"{"id": "2026-01-03"}"#], on: space.server)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(
            resumed.stderr.contains("--resume completes run")
                && resumed.stderr.contains("the backfill --window 2026-01-01..2026-01-05"),
            "\(resumed.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"], "the backfill's failed window alone")
        #expect(
            try String(
                contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
                == Self.backfilled, "the backfill's records are in the file")
        // A resume names the backfill's range or none.
        let other = try await space.run(
            ["--resume", "--window", "2026-01-02..2026-01-04"], backend: "curl")
        #expect(other.status == 2, "\(other.stdout)\(other.stderr)")
        #expect(other.stderr.contains("a backfill of --window 2026-01-01..2026-01-05"))
        let same = try await space.run(
            ["--resume", "--window", "2026-01-01T00:00:00Z..2026-01-05"], backend: "curl")
        #expect(same.status == 0 && same.stdout.contains(" 0 requests"), "\(same.stdout)")
    }

    @Test("a plain run between a failed backfill and its resume keeps the backfill's records")
    func plainRunBeforeABackfillsResume() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-between")
        var changed = try await Self.nightThenChange(space, key: key)
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(backfill.status == 1, "day 3 failed: \(backfill.stdout)")
        let backfillLog = try Self.newestLog(space)
        // Its repair names its log: after a night, `--resume` alone would complete the night.
        #expect(
            backfill.stdout.contains("--resume ") && backfill.stdout.contains("e2e/\(backfillLog)"),
            "\(backfill.stdout)")
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(
            report.stdout.contains("--resume ") && report.stdout.contains("e2e/\(backfillLog)"),
            "\(report.stdout)")
        // The next night, before anyone repairs the backfill: a new day, its own window only.
        changed.append(#"{"id": "2026-01-05"}"#)
        try RecordsTests.set(key, changed, on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-06", records: true)
        let night = try await space.run(backend: "curl")
        #expect(night.status == 0, "\(night.stdout)\(night.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-05"])
        // The night names the backfill it leaves unrepaired (trial PP: it went unsaid).
        #expect(
            night.stdout.contains(
                "the backfill --window 2026-01-01..2026-01-05 left 1 task not done")
                && night.stdout.contains("--resume \(space.logs.path)/e2e/\(backfillLog)"),
            "\(night.stdout)")
        let afterNight = try await CourierBinary.run(
            ["report", "job.json"], directory: space.folder)
        #expect(
            afterNight.stdout.contains(
                "the backfill --window 2026-01-01..2026-01-05 left 1 task not done")
                && afterNight.stdout.contains("e2e/\(backfillLog)"), "\(afterNight.stdout)")
        let backfillRun = String(backfillLog.dropLast(".jsonl".count).suffix(8))
        #expect(
            afterNight.stdout.split(separator: "\n").contains {
                $0.contains("\(backfillRun)  ") && $0.contains(" backfill ")
            }, "its runs table says which run it was: \(afterNight.stdout)")
        // Trial LL: that night's commit removed the backfill's held records, and the resume
        // then sent day 3 alone, said every task was done, and the file lacked day 1's change.
        try RecordsTests.set(key, changed + [#"{"id": "2026-01-03"}"#], on: space.server)
        let resumed = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(backfillLog)").path],
            backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        // Its kept records are older than the file the night wrote: fetched again.
        #expect(
            resumed.stderr.contains("3 tasks done by earlier runs fetched again"),
            "\(resumed.stderr)")
        let file = try String(
            contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
        #expect(file == Self.backfilled + #"{"id":"2026-01-05"}"# + "\n", "\(file)")
    }

    @Test("a backfill's records older than a night's are fetched again by its resume, not merged")
    func staleBackfillRecordsAreFetchedAgain() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-stale")
        func day(_ n: Int, _ k: String, _ v: Int = 1) -> String {
            #"{"id": "2026-01-0\#(n)", "k": "\#(k)", "v": \#(v)}"#
        }
        func writeJob(end: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "day-{windowStart}", "path": "/records/item",
                     "query": {"key": "\#(key)", "id": "{windowStart}"},
                     "window": {"start": "2026-01-01", "end": "\#(end)", "step": "1d", "format": "date"},
                     "records": {"from": "", "to": "k.jsonl", "write": "merge", "key": "/k"}}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try RecordsTests.set(
            key, [day(1, "a"), day(2, "x"), day(3, "c"), day(4, "d")], on: space.server)
        try writeJob(end: "2026-01-05")
        #expect(try await space.run(backend: "curl").status == 0)
        // A backfill fails day 3, and holds the records of days 1, 2 and 4.
        try RecordsTests.set(key, [day(1, "a"), day(2, "x"), day(4, "d")], on: space.server)
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-05"], backend: "curl")
        #expect(backfill.status == 1, "\(backfill.stdout)")
        let backfillLog = try Self.newestLog(space)
        // Upstream, x moves from day 2 to day 5 (updated); the night fetches day 5 alone.
        let moved = [day(1, "a"), day(2, "b"), day(4, "d"), day(5, "x", 2)]
        try RecordsTests.set(key, moved, on: space.server)
        try writeJob(end: "2026-01-06")
        #expect(try await space.run(backend: "curl").status == 0)
        let file = space.folder.appendingPathComponent("out/k.jsonl")
        let night = try String(contentsOf: file, encoding: .utf8)
        #expect(night.contains(#""k":"x","v":2"#), "\(night)")
        // Trial NN: the resume merged the backfill's copy of x over the night's. A replay of
        // the backfill's failed window does not take those copies: it holds the file.
        try RecordsTests.set(key, moved + [day(3, "c")], on: space.server)
        let replay = try await Self.replay(space, log: backfillLog)
        #expect(replay.status == 1, "\(replay.stdout)\(replay.stderr)")
        #expect(
            replay.stderr.contains("3 tasks done by earlier runs not taken")
                && replay.stderr.contains("--resume "), "\(replay.stderr)")
        // Trial PP: the held file's reason said the task never ran, and its repair was
        // `courier run --resume`, which completes the night.
        #expect(
            replay.stderr.contains("kept are older than the file")
                && replay.stderr.contains(
                    "--resume \(space.logs.path)/e2e/\(backfillLog)` fetches the others"),
            "\(replay.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8) == night, "the file as it was")
        // Those tasks are not done until a resume fetches them (trial QQ: the report, the
        // next night and --resume said every task was done, the file without their records).
        let report = try await CourierBinary.run(["report", "job.json"], directory: space.folder)
        #expect(
            report.stdout.contains(
                "the backfill --window 2026-01-01..2026-01-05 left 3 tasks not done")
                && report.stdout.contains("--resume \(space.logs.path)/e2e/\(backfillLog)"),
            "\(report.stdout)")
        // They are the backfill's, not the night's, whose `--resume` would not send them.
        #expect(!report.stdout.contains("next      3 tasks not done"), "\(report.stdout)")
        let resumed = try await space.run(
            ["--resume", space.logs.appendingPathComponent("e2e/\(backfillLog)").path],
            backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        // The replay's lines made days 1, 2 and 4 not done; day 3 came with the replay, after
        // the night: its records are taken as they are.
        #expect(try Self.asked(space) == [1, 2, 4].map { "day-2026-01-0\($0)" })
        // As a clean run of days 1 to 5 now writes it (merge keeps the file in key order).
        let lines = [
            #"{"id":"2026-01-01","k":"a","v":1}"#, #"{"id":"2026-01-02","k":"b","v":1}"#,
            #"{"id":"2026-01-03","k":"c","v":1}"#, #"{"id":"2026-01-04","k":"d","v":1}"#,
            #"{"id":"2026-01-05","k":"x","v":2}"#,
        ]
        let repaired = try String(contentsOf: file, encoding: .utf8)
        #expect(repaired == lines.map { $0 + "\n" }.joined(), "\(repaired)")
    }

    @Test("replay --job of a backfill's log reads the job with the backfill's range")
    func replayOfABackfill() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-replay")
        let changed = try await Self.nightThenChange(space, key: key)
        let backfill = try await space.run(["--window", "2026-01-01..2026-01-04"], backend: "curl")
        #expect(backfill.status == 1, "day 3 failed: \(backfill.stdout)")
        try RecordsTests.set(key, changed + [#"{"id": "2026-01-03"}"#], on: space.server)
        let log = try Self.newestLog(space)
        let replay = try await Self.replay(space, log: log)
        #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(
            replay.stderr.contains("the backfill --window 2026-01-01..2026-01-04"),
            "\(replay.stderr)")
        #expect(try Self.asked(space) == ["day-2026-01-03"])
        #expect(
            try String(
                contentsOf: space.folder.appendingPathComponent("out/days.jsonl"), encoding: .utf8)
                == Self.backfilled, "the backfill's records are in the file")
    }

    @Test("daily windows by Datasette's own filters hold every row once, boundaries included")
    func datasetteWindows() async throws {
        let sync = try DatasetteSyncTests.Sync("win")
        defer { sync.space.remove() }
        // Rows on the day boundaries too: each belongs to the window that starts there.
        try await sync.put((1...12).map { ($0, ($0 * 7) % 60, "r\($0)") })
        try await sync.change(
            "put",
            [#"[{"id": 13, "updated_at": "2026-01-02T00:00:00Z", "name": "edge", "deleted": 0}]"#])
        func writeJob(end: String) throws {
            try #"""
            {"version": 1, "name": "ds", "baseURL": "\#(sync.base.absoluteString)", "outputDir": "out", "tasks": [
             {"id": "day-{windowStart}", "path": "/store/\#(sync.table).json",
              "query": {"_shape": "array", "_size": "max", "updated_at__gte": "{windowStart}", "updated_at__lt": "{windowEnd}"},
              "window": {"start": "2025-12-31T00:00:00Z", "end": "\#(end)", "step": "1d"},
              "records": {"from": "/*", "to": "rows.jsonl", "write": "merge", "key": "/id"}}
            ]}
            """#.write(
                to: sync.space.folder.appendingPathComponent("job.json"), atomically: true,
                encoding: .utf8)
        }
        try writeJob(end: "2026-01-02T00:00:00Z")
        var result = try await sync.run("curl")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("2 tasks, 2 ok"), "\(result.stdout)")
        let file = sync.space.folder.appendingPathComponent("out/rows.jsonl")
        var ids = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count
        #expect(ids == 12, "the row at 2026-01-02T00:00:00Z is the next window's")
        try writeJob(end: "2026-01-03T00:00:00Z")
        result = try await sync.run("urlsession")
        #expect(result.stdout.contains("1 task, 1 ok"), "only the new window: \(result.stdout)")
        ids = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count
        #expect(ids == 13)
    }

    @Test("two shards share the windows out, and each keeps the windows it did")
    func windowsOverShards() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("window-shards")
        try RecordsTests.set(key, Self.days(1...6), on: space.server)
        try Self.writeJob(space, key: key, end: "2026-01-07")
        var asked: [String] = []
        for shard in ["0/2", "1/2"] {
            let result = try await space.run(["--shard", shard], backend: "curl")
            #expect(result.status == 0, "\(shard): \(result.stdout)\(result.stderr)")
            asked += try Self.asked(space)
        }
        #expect(asked.sorted() == (1...6).map { "day-2026-01-0\($0)" }, "each window once")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/days").path)
        #expect(saved.sorted() == (1...6).map { "2026-01-0\($0).json" })
        let after = try await space.run(backend: "curl")
        #expect(after.status == 0 && after.stdout.contains("0 tasks"), "\(after.stdout)")
    }

    @Test("--window is refused for a job with no window task, and for records that append")
    func backfillRefusals() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        let none = try await space.run(["--window", "2026-01-01..2026-01-02"], backend: "curl")
        #expect(none.status == 2 && none.stderr.contains("this job has none"), "\(none.stderr)")
        try space.writeJob(
            tasks: #"""
                {"id": "d-{windowStart}", "path": "/echo",
                 "window": {"start": "2026-01-01", "end": "2026-01-03", "step": "1d"},
                 "records": {"from": "", "to": "d.jsonl", "write": "append"}}
                """#)
        let append = try await space.run(["--window", "2026-01-01..2026-01-02"], backend: "curl")
        #expect(append.status == 2, "\(append.stderr)")
        #expect(append.stderr.contains("would add their records twice"), "\(append.stderr)")
        #expect(try await space.run(backend: "curl").status == 0, "a plain run appends once")
    }

    @Test("a bound that is not a time is refused, naming its path and what was found")
    func badBounds() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "d-{windowStart}", "path": "/echo",
                 "window": {"start": "yesterday", "end": "soon", "step": "1d"}}
                """#)
        let refused = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains(
                #"tasks[0].window.start: expected a time such as "2026-01-01T00:00:00Z", "2026-01-01" or seconds since 1970, found "yesterday""#
            ), "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                #"tasks[0].window.end: expected a time such as "2026-02-01", found "soon" (leave it out for now)"#
            ), "\(refused.stderr)")
        // Each error points at its value's line, not the task's (trial V); seconds since 1970
        // may be a number.
        try space.writeJob(
            tasks: #"""
                {"id": "d-{windowStart}", "path": "/echo",
                 "window": {"start": 1767225600,
                            "step": "a while"}}
                """#)
        let step = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(step.status == 2)
        #expect(
            step.stderr.contains(#"job.json:3:13: tasks[0].window.step: expected a length"#),
            "\(step.stderr)")
        #expect(!step.stderr.contains("window.start"), "a number is a time: \(step.stderr)")
        // Milliseconds by mistake are said as such, not "expected a string" (trial Y).
        try space.writeJob(
            tasks: #"""
                {"id": "d-{windowStart}", "path": "/echo",
                 "window": {"start": 1767225600000, "step": "1d"}}
                """#)
        let millis = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(millis.status == 2)
        #expect(
            millis.stderr.contains("(whole seconds, up to 10 digits), found 1767225600000"),
            "\(millis.stderr)")
    }

    @Test("the bounds as RFC 3339 and epoch seconds; windows end at now less the lag")
    func formats() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "h-{windowStart}", "path": "/echo", "query": {"from": "{windowStart}", "to": "{windowEnd}"},
                 "window": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T12:00:00Z", "step": "6h"}},
                {"id": "e-{windowStart}", "path": "/echo", "query": {"from": "{windowStart}"},
                 "window": {"start": "1767225600", "end": "1767312000", "step": "12h", "format": "epoch"}},
                {"id": "n-{windowStart}", "path": "/echo",
                 "window": {"start": "2026-01-01", "step": "1d", "lag": "1h", "format": "date"}}
                """#)
        let before = Self.wholeDays(since: 1_767_225_600 + 3600)
        let plan = try await space.run(["--dry-run"], backend: "curl")
        #expect(
            plan.stdout.contains("from=2026-01-01T06%3A00%3A00Z&to=2026-01-01T12%3A00%3A00Z"),
            "\(plan.stdout)")
        #expect(plan.stdout.contains("e-1767268800"), "\(plan.stdout)")
        // Every whole day from 2026-01-01 to now less an hour (now as before or after the run).
        let counts = Set([before, Self.wholeDays(since: 1_767_225_600 + 3600)]).map {
            "\(2 + 2 + $0) tasks"
        }
        #expect(counts.contains { plan.stdout.contains($0) }, "\(plan.stdout)")
    }

    /// Whole days from `start` (seconds since 1970) to now.
    static func wholeDays(since start: Double) -> Int {
        Int((Date().timeIntervalSince1970 - start) / 86_400)
    }
}
