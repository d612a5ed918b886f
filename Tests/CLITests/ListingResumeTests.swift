import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Resume inside a listing (issue 41, item 5): a paginated task that failed or was killed on a
/// page goes on, with `--resume` or `replay --job`, from the page after the last one kept, not
/// from page 1, and its outputs end byte for byte those of a clean run.
@Suite("resume inside a listing")
struct ListingResumeTests {
    enum Interruption: String, CaseIterable, CustomTestStringConvertible {
        /// Page 5 answers 500 until the test switches it on; the run fails.
        case failedPage
        /// Page 5 hangs until the test switches it on; the run is killed (SIGKILL) there.
        case killed
        var testDescription: String { rawValue }
    }

    enum Recovery: String, CustomTestStringConvertible {
        case resume, replayJob
        var testDescription: String { rawValue }
    }

    static let cases: [(Interruption, Recovery, String)] = [
        (.failedPage, .resume, "curl"), (.failedPage, .resume, "urlsession"),
        (.killed, .resume, "curl"), (.killed, .resume, "urlsession"),
        (.failedPage, .replayJob, "curl"), (.killed, .replayJob, "urlsession"),
    ]

    /// 16 records in pages of 2: 8 pages (or the records `ids`, updated in their order).
    static func fill(
        _ space: JobWorkspace, key: String, ids: ClosedRange<Int> = 1...16
    ) async throws {
        let records = ids.map {
            #"{"id": \#($0), "updated_at": "2026-01-01T00:00:\#(String(format: "%02d", $0))Z", "name": "r\#($0)"}"#
        }
        var components = URLComponents(
            url: space.server.url("/store/put"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "key", value: key)]
        try await ProbeClient().post(
            components.url!, json: Data("[\(records.joined(separator: ","))]".utf8))
    }

    /// A listing with records, a save per page and a `since` cursor; `fault` is the query's
    /// own part that makes page 5 fail or hang until `toggle` is switched on.
    /// - Parameter records: `false` for shards, which write no records.
    static func writeJob(
        _ space: JobWorkspace, key: String, fault: String, shaping: String = "",
        records: Bool = true
    ) throws {
        let recordsRule =
            records
            ? #""records": {"from": "/items/*", "to": "records/items.jsonl", "write": "merge", "key": "/id"\#(shaping)},"#
            : ""
        try space.writeJob(
            tasks: #"""
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "size": "2", "since": "{since}"\#(fault)},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                 \#(recordsRule)
                 "save": "pages/{page}.json"}
                """#,
            extra: #""retry": {"maxAttempts": 1}, "timeout": 600,"#)
    }

    /// The pages the server was asked for, in order, for `key`.
    static func pagesAsked(_ space: JobWorkspace, key: String) -> [Int] {
        let requests =
            BlockingFetch.json(space.server.url("/hits?key=\(key)"))?["requests"]
            as? [[String: Any]]
            ?? []
        return requests.compactMap { request -> Int? in
            guard let path = request["path"] as? String, path.hasPrefix("/store/items"),
                let query = URLComponents(string: path)?.queryItems
            else { return nil }
            return Int(query.first { $0.name == "page" }?.value ?? "1")
        }
    }

    /// The lines of the records file.
    static func recordLines(_ space: JobWorkspace) throws -> [Substring] {
        try String(
            contentsOf: space.folder.appendingPathComponent("out/records/items.jsonl"),
            encoding: .utf8
        ).split(separator: "\n")
    }

    /// What a listing leaves under `out/.courier` while it is not done: listing files,
    /// temporaries and parts (empty once every task ended ok).
    static func leftovers(_ space: JobWorkspace) -> [String] {
        let courier = space.folder.appendingPathComponent("out/.courier")
        return (FileManager.default.enumerator(atPath: courier.path)?.allObjects ?? [])
            .compactMap { $0 as? String }
            .filter { $0.hasSuffix(".listing") || $0.hasSuffix(".tmp") || $0.hasSuffix(".part") }
    }

    /// A workspace whose store holds the 16 records, with the job whose page fault (query
    /// members, `TOGGLE` standing for a toggle of its own) lasts until the toggle is switched on.
    static func cutListing(_ name: String, fault: String) async throws -> (
        space: JobWorkspace, key: String, toggle: String
    ) {
        let space = try JobWorkspace()
        let key = FixtureServer.uniqueKey(name)
        try await fill(space, key: key)
        let toggle = FixtureServer.uniqueKey("listing-toggle")
        try writeJob(space, key: key, fault: fault.replacingOccurrences(of: "TOGGLE", with: toggle))
        return (space, key, toggle)
    }

    /// Every file under `out/`, the locks left out.
    static func outputs(_ space: JobWorkspace) -> [String: Data] {
        RecoveryMatrixTests.outputs(space)
    }

    @Test(
        "a listing cut on page 5 of 8 goes on from page 5, and ends as a clean run",
        arguments: cases)
    func resumesInsideTheListing(
        interruption: Interruption, recovery: Recovery, backend: String
    ) async throws {
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let cleanKey = FixtureServer.uniqueKey("listing-clean")
        try await Self.fill(clean, key: cleanKey)
        let toggle = FixtureServer.uniqueKey("listing-toggle")
        // The same job text but for the key: the fault is switched on from the start.
        _ = await ProbeClient().get(clean.server.url("/toggle/on?name=\(toggle)"))
        let fault =
            interruption == .failedPage
            ? #", "fail_page": "5", "fail_until": "\#(toggle)""#
            : #", "hang_page": "5", "hang_until": "\#(toggle)""#
        try Self.writeJob(clean, key: cleanKey, fault: fault)
        let cleanRun = try await clean.run(backend: backend)
        #expect(cleanRun.status == 0, "\(cleanRun.stderr)")

        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("listing")
        try await Self.fill(space, key: key)
        let cut = FixtureServer.uniqueKey("listing-toggle")
        let cutFault = fault.replacingOccurrences(of: toggle, with: cut)
        try Self.writeJob(space, key: key, fault: cutFault)
        switch interruption {
        case .failedPage:
            let failed = try await space.run(backend: backend)
            #expect(failed.status == 1, "\(failed.stderr)")
        case .killed:
            let running = try CourierBinary.launch(
                [
                    "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                    "--no-progress",
                ],
                directory: space.folder)
            // Six arrivals: the records put in, then pages 1 to 5 (which hangs).
            await SignalTests.signal(
                running, with: SIGKILL, afterArrivals: 6, key: key, server: space.server)
            _ = await running.wait(seconds: 300)
        }
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5])
        let checkpoints = space.folder.appendingPathComponent("out/.courier/listings")
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: checkpoints.path))?.count == 1,
            "one checkpoint for the cut task")

        // The repair's dry run says where the listing goes on, and sends nothing.
        let plan =
            recovery == .resume
            ? try await space.run(["--resume", "--dry-run"], backend: backend)
            : try await CourierBinary.run(
                [
                    "replay", "--job", "job.json", "--log-dir", space.logs.path, "--dry-run",
                ],
                directory: space.folder)
        #expect(plan.stdout.contains("page=5"), "\(plan.stdout)")
        #expect(
            plan.stdout.contains("(goes on from page 5: its checkpoint, kept by run"),
            "\(plan.stdout)")
        if recovery == .resume {
            #expect(
                plan.stdout.contains("=> records merge into out/records/items.jsonl"),
                "\(plan.stdout)")
        }
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5])
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        let repaired =
            switch recovery {
            case .resume: try await space.run(["--resume"], backend: backend)
            case .replayJob:
                try await CourierBinary.run(
                    [
                        "replay", "--job", "job.json", "--log-dir", space.logs.path, "--backend",
                        backend, "--no-progress",
                    ],
                    directory: space.folder)
            }
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(
            repaired.stderr.contains(
                "courier: e2e: task sync goes on from page 5: pages 1-4 were kept by run"),
            "\(repaired.stderr)")
        #expect(
            Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 5, 6, 7, 8],
            "pages 1 to 4 are not asked for again")
        let differences = RecoveryMatrixTests.differences(
            Self.outputs(space), Self.outputs(clean))
        #expect(differences.isEmpty, "outputs differ from the clean run's: \(differences)")
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: checkpoints.path)) ?? [] == [],
            "the checkpoint goes once the task is ok")
        #expect(Self.leftovers(space) == [], "no listing file, temporary or part is left")

        // The next run is a new night: every page again, nothing resumed.
        let again = try await space.run(backend: backend)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stderr.contains("goes on from page"), "\(again.stderr)")
    }

    /// A next link that carries a secret (the API key in the query, kept in the link) is never
    /// written into a checkpoint: the cut task starts again at page 1, and no byte under the
    /// output folder holds the key.
    @Test("a listing whose next link carries a secret keeps no checkpoint, and starts again")
    func secretLinksAreNotKept() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("listing-secret")
        try await Self.fill(space, key: key)
        let cut = FixtureServer.uniqueKey("listing-toggle")
        let secret = "sk-listing-\(UUID().uuidString)"
        try Self.writeJob(
            space, key: key,
            fault: #", "api_key": "${env:LISTING_KEY}", "fail_page": "5", "fail_until": "\#(cut)""#)
        let failed = try await space.run(backend: "curl", environment: ["LISTING_KEY": secret])
        #expect(failed.status == 1, "\(failed.stderr)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        let resumed = try await space.run(
            ["--resume"], backend: "curl", environment: ["LISTING_KEY": secret])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8])
        let written = try space.everyWrittenByte()
        #expect(written.range(of: Data(secret.utf8)) == nil, "the key is in a written byte")
    }

    /// What a resume takes from disk is checked: records of the listing file changed since
    /// the checkpoint are not used (the task starts at page 1), and a checkpoint file that is
    /// not one Courier wrote is named and replaced by the next run's own.
    @Test("a changed listing file or a garbage checkpoint is not trusted")
    func tamperedStateIsNotTrusted() async throws {
        let (space, key, cut) = try await Self.cutListing(
            "listing-tamper", fault: #", "fail_page": "5", "fail_until": "TOGGLE""#)
        defer { space.remove() }
        #expect(try await space.run(backend: "curl").status == 1)
        let checkpoints = space.folder.appendingPathComponent("out/.courier/listings")
        let names = try FileManager.default.contentsOfDirectory(atPath: checkpoints.path)
        let checkpoint = checkpoints.appendingPathComponent(try #require(names.first))
        // One byte of a record changed (its line count stays).
        let parts = space.folder.appendingPathComponent("out/.courier/records")
        let listingFile = try #require(
            FileManager.default.enumerator(atPath: parts.path)?.allObjects
                .compactMap { $0 as? String }.first { $0.hasSuffix(".listing") })
        let listingURL = parts.appendingPathComponent(listingFile)
        var bytes = try Data(contentsOf: listingURL)
        let quote = try #require(bytes.lastIndex(of: UInt8(ascii: "r")))
        bytes[quote] = UInt8(ascii: "X")
        try bytes.write(to: listingURL)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(
            resumed.stderr.contains(
                "pages are gone or changed since its checkpoint; it starts at page 1"),
            "\(resumed.stderr)")
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8])
        let lines = try Self.recordLines(space)
        #expect(lines.count == 16)
        #expect(!lines.joined().contains("X"), "the changed record is not in the file")

        // Garbage where the checkpoint goes: the next cut run says so and keeps its own. Four
        // new records (two pages after the cursor), the second page failing.
        try Data("garbage".utf8).write(to: checkpoint)
        try await Self.fill(space, key: key, ids: 17...20)
        let cut2 = FixtureServer.uniqueKey("listing-toggle")
        try Self.writeJob(space, key: key, fault: #", "fail_page": "2", "fail_until": "\#(cut2)""#)
        let failed = try await space.run(backend: "curl")
        #expect(failed.status == 1)
        #expect(
            failed.stderr.contains(
                "not a listing checkpoint courier wrote; the task starts at page 1, and the task's next checkpoint replaces it"
            ),
            "\(failed.stderr)")
        let replaced = try String(contentsOf: checkpoint, encoding: .utf8)
        #expect(replaced.contains(#""pages":1"#), "\(replaced)")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut2)"))
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stderr.contains("goes on from page 2: page 1 was kept by run"), "\(again.stderr)")
    }

    /// A SIGTERM that lets the tasks under way finish (its grace) and finds none left to run
    /// cut nothing: the records file is written as without the signal, not held for a resume.
    @Test("a SIGTERM after which every task ended holds no records file back")
    func signalAfterEveryTaskEnded() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("records-term")
        try RecordsTests.set(
            key, [#"{"id":1,"v":1}"#, #"{"id":2,"v":1}"#], delayMs: 1500, on: space.server)
        try space.writeJob(
            tasks: #"""
                {"id": "one", "path": "/records/list", "query": {"key": "\#(key)", "size": "10"},
                 "records": \#(RecordsTests.records("replace"))}
                """#)
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        // Two arrivals: the record set, then the task's request, which the server holds.
        await SignalTests.signal(
            running, with: SIGTERM, afterArrivals: 2, key: key, server: space.server)
        let ended = await running.wait(seconds: 300)
        #expect(!ended.output.contains("before every task ran"), "\(ended.output)")
        let file = space.folder.appendingPathComponent("out/records/users.jsonl")
        #expect(
            (try? String(contentsOf: file, encoding: .utf8)) == #"{"id":1,"v":1}"# + "\n"
                + #"{"id":2,"v":1}"# + "\n", "\(ended.output)")
    }

    /// The records kept by a checkpoint were made under the job's records settings: a job
    /// that now keeps them otherwise (here, `select`) starts the listing at page 1, and the
    /// earlier run's listing file goes.
    @Test("a listing whose records settings changed since its checkpoint starts at page 1")
    func changedRecordsSettingsStartAgain() async throws {
        let (space, key, cut) = try await Self.cutListing(
            "listing-settings", fault: #", "fail_page": "5", "fail_until": "TOGGLE""#)
        defer { space.remove() }
        let fault = #", "fail_page": "5", "fail_until": "\#(cut)""#
        #expect(try await space.run(backend: "curl").status == 1)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        try Self.writeJob(space, key: key, fault: fault, shaping: #", "select": ["id", "name"]"#)
        let resumed = try await space.run(["--resume"], backend: "curl")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("keeps its records otherwise"), "\(resumed.stderr)")
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8])
        let lines = try Self.recordLines(space)
        #expect(lines.count == 16)
        #expect(lines.allSatisfy { !$0.contains("updated_at") }, "every record selected")
        #expect(Self.leftovers(space) == [], "nothing of the checkpoint is left")
    }

    /// A run killed early in a listing (its records in the listing's tagged temporary until its
    /// first checkpoint renames it, which the next run would sweep) leaves nothing under
    /// `.courier` once the resume is done: no listing file, temporary or part piles up.
    @Test("a listing killed on page 2 leaves nothing under .courier after the resume")
    func killedBeforeTheFirstCheckpoint() async throws {
        let (space, key, cut) = try await Self.cutListing(
            "listing-first", fault: #", "hang_page": "2", "hang_until": "TOGGLE""#)
        defer { space.remove() }
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            directory: space.folder)
        // Three arrivals: the records put in, page 1, then page 2, which hangs.
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 3, key: key, server: space.server)
        _ = await running.wait(seconds: 300)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        let again = try await space.run(["--resume"], backend: "curl")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.leftovers(space) == [], "left under .courier: \(Self.leftovers(space))")
        let lines = try Self.recordLines(space)
        #expect(lines.count == 16)
    }

    /// Shards: the shard that owns the listing keeps its checkpoint, and its own `--resume`
    /// goes on from it; the saves and the cursor end as a clean unsharded run's.
    @Test("a sharded listing cut on page 5 goes on from page 5 in its shard's resume")
    func shardsResumeTheirListing() async throws {
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let cleanKey = FixtureServer.uniqueKey("listing-shard-clean")
        try await Self.fill(clean, key: cleanKey)
        try Self.writeJob(clean, key: cleanKey, fault: "", records: false)
        #expect(try await clean.run(backend: "curl").status == 0)

        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("listing-shard")
        try await Self.fill(space, key: key)
        let cut = FixtureServer.uniqueKey("listing-toggle")
        try Self.writeJob(
            space, key: key, fault: #", "fail_page": "5", "fail_until": "\#(cut)""#,
            records: false)
        var statuses: [Int32] = []
        for shard in ["0/2", "1/2"] {
            statuses.append(try await space.run(["--shard", shard], backend: "curl").status)
        }
        #expect(statuses.sorted() == [0, 1], "the owning shard failed, the other had nothing")
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        var notes = ""
        for shard in ["0/2", "1/2"] {
            let resumed = try await space.run(["--shard", shard, "--resume"], backend: "curl")
            #expect(resumed.status == 0, "\(resumed.stderr)")
            notes += resumed.stderr
        }
        #expect(
            notes.contains("task sync goes on from page 5: pages 1-4 were kept by run"), "\(notes)")
        #expect(Self.pagesAsked(space, key: key) == [1, 2, 3, 4, 5, 5, 6, 7, 8])
        let differences = RecoveryMatrixTests.differences(
            Self.outputs(space), Self.outputs(clean))
        #expect(differences.isEmpty, "outputs differ from the clean run's: \(differences)")
    }

    /// Trial GGG: a run killed in a listing whose next link carries a secret (so it keeps no
    /// checkpoint) left its listing file under `.courier/records`, and it stayed after the
    /// resume and every run after. The task's ok sweeps the listing files of earlier runs.
    @Test(
        "a listing with secret links killed midway leaves nothing under .courier after the resume")
    func killedSecretListingLeavesNothing() async throws {
        let (space, key, cut) = try await Self.cutListing(
            "listing-secret-kill",
            fault: #", "api_key": "${env:LISTING_KEY}", "hang_page": "5", "hang_until": "TOGGLE""#)
        defer { space.remove() }
        let environment = ["LISTING_KEY": "sk-listing-\(UUID().uuidString)"]
        let running = try CourierBinary.launch(
            ["run", "job.json", "--log-dir", space.logs.path, "--no-progress"],
            environment: environment, directory: space.folder)
        // Six arrivals: the records put in, then pages 1 to 5 (which hangs).
        await SignalTests.signal(
            running, with: SIGKILL, afterArrivals: 6, key: key, server: space.server)
        _ = await running.wait(seconds: 300)
        _ = await ProbeClient().get(space.server.url("/toggle/on?name=\(cut)"))
        let again = try await space.run(["--resume"], backend: "curl", environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.leftovers(space) == [], "left under .courier: \(Self.leftovers(space))")
        #expect(try Self.recordLines(space).count == 16)
    }
}
