import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every recovery path over every kind of task, on both backends: each cell ends with the
/// outputs byte for byte those of one clean uninterrupted run, and the job's history with
/// every task ok exactly once.
///
/// One job holds every kind of task (static, range, lines, a capture fan-out whose children use
/// basic auth, a paginated task, basic auth, a captured token, conditional), so that each path is tried on all of them
/// at once. The fixture's `/recovery/…` API fails a deterministic part of them at each outage
/// level (level 1's failures are a subset of level 2's): among them the search's page 4 and
/// the records listing's page 4, whose pages 1 to 3 a checkpoint keeps for the repair.
@Suite("recovery matrix")
struct RecoveryMatrixTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case killThenResume, killThenResumeLog, outageThenReplay, replayThenResume
        case resumeThenReplay, shardsOneKilledThenResume, sigtermThenResume
        var testDescription: String { rawValue }
    }

    static let password = "hunter22"
    /// Tasks in the job: static 1, range 8, writes with idempotency keys 4 (POSTs whose
    /// effects the server counts: a kill may land while one is under way), lines 6, listing 1
    /// + its 12 children, paginated 1, basic 6, login 1, token 6, conditional 6, a POST search
    /// paged in its body 1, a paginated listing keeping shaped records 1 (not in shards: a
    /// sharded run writes no records), children deleted upstream (404, ignored) 3.
    static func taskCount(records: Bool) -> Int { records ? 57 : 56 }

    /// The effects the server made for `key`'s writes.
    static func effects(key: String, server: FixtureServer) -> Int {
        BlockingFetch.json(server.url("/recovery/effects?key=\(key)"))?["count"] as? Int ?? -1
    }

    static func writeJob(_ space: JobWorkspace, key: String, records: Bool = true) throws {
        try "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\n".write(
            to: space.folder.appendingPathComponent("words.txt"), atomically: true,
            encoding: .utf8)
        let recordsTask = #"""
            {"id": "recs", "path": "/recovery/list", "query": {"key": "\#(key)", "total": "25", "size": "5", "name": "rec"},
             "paginate": {"next": {"linkHeader": "next"}},
             "records": {"from": "/items/*", "to": "records/ids.jsonl", "write": "merge", "key": "/id",
                         "add": {"list": "recs"}, "csv": ["id", "list"]}},
            """#
        let item = #""path": "/recovery/item", "query": {"key": "\#(key)", "id": "#
        try space.writeJob(
            tasks: #"""
                {"id": "static", \#(item)"static"}, "save": "static.json"},
                {"id": "r{n}", \#(item)"r{n}"}, "foreach": {"n": {"range": [1, 8]}}, "save": "range/{n}.json"},
                {"id": "w{n}", "method": "POST", "path": "/recovery/write", "query": {"key": "\#(key)", "id": "w{n}"},
                 "json": {"n": "{n}"}, "foreach": {"n": {"range": [1, 4]}}, "idempotencyKey": true, "save": "writes/{n}.json"},
                {"id": "l-{w}", \#(item)"l-{w}"}, "foreach": {"w": {"lines": "words.txt"}}, "save": "lines/{w}.json"},
                {"id": "ids", "path": "/recovery/list", "query": {"key": "\#(key)", "total": "12", "size": "12", "name": "list"},
                 "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "c{id}", "path": "/recovery/private", "query": {"key": "\#(key)", "id": "c{id}"}, "foreach": {"id": {"capture": "ids"}},
                 "auth": {"basic": {"user": "user", "password": "${env:RECOVERY_PW}"}}, "save": "fan/{id}.json"},
                {"id": "pages", "path": "/recovery/list", "query": {"key": "\#(key)", "total": "25", "size": "5", "name": "ids"},
                 "paginate": {"next": {"linkHeader": "next"}}, "save": "pages/{page}.json"},
                {"id": "b{n}", "path": "/recovery/private", "query": {"key": "\#(key)", "id": "b{n}"}, "foreach": {"n": {"range": [1, 6]}},
                 "auth": {"basic": {"user": "user", "password": "${env:RECOVERY_PW}"}}, "save": "basic/{n}.json"},
                {"id": "login", "method": "POST", "path": "/recovery/login", "query": {"key": "\#(key)"},
                 "json": {"password": "${env:RECOVERY_PW}"}, "capture": {"token": {"json": "/token", "secret": true}}},
                {"id": "t{n}", "path": "/recovery/private", "query": {"key": "\#(key)", "id": "t{n}"}, "foreach": {"n": {"range": [1, 6]}},
                 "auth": {"bearer": "{token}"}, "save": "token/{n}.json"},
                {"id": "k{n}", \#(item)"k{n}"}, "foreach": {"n": {"range": [1, 6]}}, "conditional": true, "save": "cond/{n}.json"},
                {"id": "search", "method": "POST", "path": "/recovery/search", "query": {"key": "\#(key)", "total": "12", "name": "b"},
                 "json": {"page": 1, "size": 3}, "retry": {"maxAttempts": 1, "nonIdempotent": true},
                 "paginate": {"next": {"page": {"body": "/page", "start": 1}}, "stopWhen": {"false": "/has_more"}},
                 "save": "search/{page}.json"},
                \#(records ? recordsTask : "")
                {"id": "g{n}", \#(item)"gone-{n}"}, "foreach": {"n": {"range": [1, 3]}},
                 "onResponse": [{"status": [404], "action": "ignore"}], "save": "gone/{n}.json"}
                """#,
            extra: #""concurrency": 2, "retry": {"maxAttempts": 1}, "timeout": 600,"#)
    }

    /// Sets the server's outage `level` for `key`; with `holdAfter`, requests past that many
    /// wait for the next call, so that a run cannot end before the test kills it.
    static func level(
        _ level: Int, delayMs: Int = 0, holdAfter: Int = 0, key: String, server: FixtureServer
    ) {
        _ = BlockingFetch.json(
            server.url(
                "/recovery/level?key=\(key)&level=\(level)&delay_ms=\(delayMs)&hold_after=\(holdAfter)"
            ))
    }

    /// Waits (up to 2,400 looks, 50 ms apart) until the server holds a request of `key`.
    static func waitUntilHeld(key: String, server: FixtureServer) async throws {
        for _ in 0..<2_400 {
            if (BlockingFetch.json(server.url("/recovery/held?key=\(key)"))?["held"] as? Int ?? 0)
                > 0
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the server never held a request")
    }

    /// `courier ARGS` in the workspace, with the job's secret in the environment.
    static func courier(_ arguments: [String], _ space: JobWorkspace, backend: String)
        async throws -> CourierBinary.Result
    {
        try await CourierBinary.run(
            arguments + ["--log-dir", space.logs.path, "--backend", backend, "--no-progress"],
            environment: ["RECOVERY_PW": password], directory: space.folder)
    }

    static func launch(_ arguments: [String], _ space: JobWorkspace, backend: String) throws
        -> CourierBinary.Running
    {
        try CourierBinary.launch(
            arguments + ["--log-dir", space.logs.path, "--backend", backend, "--no-progress"],
            environment: ["RECOVERY_PW": password], directory: space.folder)
    }

    /// Every file under `out/` with its bytes; the locks (`.courier/lock.*`, `state.lock`) left out, the
    /// conditional state and any leftover temporary kept (a temporary is a difference). The kept
    /// captures (`.courier/captures/`) are left out too: they name the run and the shard that
    /// kept them (KeptCapturesTests checks what they hold and what a repair takes from them).
    /// The conditional state without each saved file's modification time, which no two runs
    /// share (its validators and the files' sizes are compared as they are).
    static func withoutFileTimes(_ state: Data) -> Data {
        guard var root = try? JSONSerialization.jsonObject(with: state) as? [String: Any],
            let entries = root["entries"] as? [String: [String: Any]]
        else { return state }
        root["entries"] = entries.mapValues { $0.filter { $0.key != "modified" } }
        return (try? JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])) ?? state
    }

    static func outputs(_ space: JobWorkspace) -> [String: Data] {
        let root = space.folder.appendingPathComponent("out")
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let relative = enumerator?.nextObject() as? String {
            guard !relative.hasPrefix(".courier/lock"), relative != ".courier/state.lock",
                !relative.hasPrefix(".courier/captures"),
                let data = FileManager.default.contents(
                    atPath: root.appendingPathComponent(relative).path),
                !(try! FileManager.default.attributesOfItem(
                    atPath: root.appendingPathComponent(relative).path)[.type]
                    as! FileAttributeType == .typeDirectory)
            else { continue }
            files[relative] = relative == ".courier/state" ? Self.withoutFileTimes(data) : data
        }
        return files
    }

    /// The files that differ from `expected` (missing, extra, or other bytes), by name.
    static func differences(_ files: [String: Data], _ expected: [String: Data]) -> [String] {
        Set(files.keys).union(expected.keys).filter { files[$0] != expected[$0] }.sorted()
    }

    /// The job's history, folded independently of courier's own reader: each task's last
    /// final line over the logs in the order their runs started.
    static func finalOutcomes(_ space: JobWorkspace) throws -> [String: String] {
        var runs: [(ts: String, lines: [[String: Any]])] = []
        let folder = space.logs.appendingPathComponent("e2e")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasSuffix(".jsonl") {
            let text = try String(
                contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let lines = text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            runs.append((lines.first?["ts"] as? String ?? "", lines))
        }
        var finals: [String: String] = [:]
        for run in runs.sorted(by: { $0.ts < $1.ts }) {
            for line in run.lines {
                guard let task = line["task"] as? String, let outcome = line["outcome"] as? String
                else { continue }
                finals[task] = outcome
            }
        }
        // A skip whose id is still a template (`c{id}`: the parent failed before its values
        // came) stands only until its children were reached in a later run.
        for template in finals.keys where template.contains("{") {
            let prefix = template.prefix { $0 != "{" }
            if finals.contains(where: { !$0.key.contains("{") && $0.key.hasPrefix(prefix) }) {
                finals[template] = nil
            }
        }
        return finals
    }

    /// Waits until a log in the job's folder whose name ends with `suffix`, and is not one of
    /// `earlier` (the logs of runs before the one awaited), holds `count` request lines (120 s
    /// at most: a hang guard).
    static func waitForRequests(
        _ count: Int, in space: JobWorkspace, suffix: String = ".jsonl",
        besides earlier: Set<String> = []
    ) async throws {
        let folder = space.logs.appendingPathComponent("e2e")
        for _ in 0..<2_400 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names where name.hasSuffix(suffix) && !earlier.contains(name) {
                let text =
                    (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
                    ?? ""
                if text.components(separatedBy: #""event":"request""#).count - 1 >= count {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the run never logged \(count) requests")
    }

    /// Checks that a kill landed mid-run: the process died of SIGKILL, and the log of the
    /// killed run (the newest whose name ends with `suffix` in `folder`) has at least
    /// `atLeast` request lines, fewer than `total`, and no `run.end`. A run that ended before
    /// its kill would make the recovery after it prove nothing.
    static func expectKilledMidRun(
        status: Int32?, folder: URL, suffix: String = ".jsonl", total: Int, atLeast: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            status == SIGKILL, "ended by SIGKILL, not \(String(describing: status))",
            sourceLocation: sourceLocation)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(suffix) }.sorted()
        guard let newest = names.last,
            let text = try? String(
                contentsOf: folder.appendingPathComponent(newest), encoding: .utf8)
        else {
            Issue.record(
                "no log of the killed run in \(folder.path)", sourceLocation: sourceLocation)
            return
        }
        let requests = text.components(separatedBy: #""event":"request""#).count - 1
        #expect(
            !text.contains(#""event":"run.end""#), "the killed run ended on its own first",
            sourceLocation: sourceLocation)
        #expect(
            requests >= atLeast && requests < total,
            "killed after \(requests) of \(total) requests",
            sourceLocation: sourceLocation)
    }

    @Test(
        "each recovery path over every kind of task ends as a clean run, byte for byte",
        arguments: Path.allCases, RunCommandTests.backends)
    func cell(path: Path, backend: String) async throws {
        // The reference: one clean uninterrupted run.
        let clean = try JobWorkspace()
        defer { clean.remove() }
        let cleanKey = FixtureServer.uniqueKey("clean")
        let records = path != .shardsOneKilledThenResume
        try Self.writeJob(clean, key: cleanKey, records: records)
        let reference = try await Self.courier(["run", "job.json"], clean, backend: backend)
        #expect(reference.status == 0, "\(reference.stdout) \(reference.stderr)")
        let expected = Self.outputs(clean)
        // static, range, writes, lines, fan-out, pages, basic, token, conditional, the state,
        // the search's pages, the records file and its CSV (the ignored 404s save nothing).
        let outputCount = 1 + 8 + 4 + 6 + 12 + 5 + 6 + 6 + 6 + 1 + 4 + (records ? 2 : 0)
        #expect(expected.count == outputCount, "every output and the state")

        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("matrix")
        try Self.writeJob(space, key: key, records: records)
        let server = space.server
        var repair: [String]
        switch path {
        case .killThenResume, .killThenResumeLog:
            // Requests past the twelfth wait until the test lets them go: the kill lands
            // mid-run however fast or slow the machine.
            Self.level(0, holdAfter: 12, key: key, server: server)
            let running = try Self.launch(["run", "job.json"], space, backend: backend)
            try await Self.waitForRequests(12, in: space)
            try await Self.waitUntilHeld(key: key, server: server)
            running.send(SIGKILL)
            let (status, _) = await running.wait(seconds: 300)
            Self.expectKilledMidRun(
                status: status, folder: space.logs.appendingPathComponent("e2e"),
                total: outputCount)
            Self.level(0, key: key, server: server)
            repair = ["run", "job.json", "--resume"]
            if path == .killThenResumeLog {
                // The killed run's log named: the history it reads is that log's (and the
                // job's own for its writes).
                let folder = space.logs.appendingPathComponent("e2e")
                let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(logs.count == 1, "\(logs)")
                repair.append(folder.appendingPathComponent(try #require(logs.first)).path)
            }
        case .sigtermThenResume:
            // The stop a cron job meets at shutdown: no task starts after it, and those under
            // way (held by the server until the signal is taken) finish in the grace period.
            Self.level(0, holdAfter: 12, key: key, server: server)
            let running = try Self.launch(
                ["run", "job.json", "--grace", "1h"], space, backend: backend)
            try await Self.waitForRequests(12, in: space)
            try await Self.waitUntilHeld(key: key, server: server)
            running.send(SIGTERM)
            try await running.waitForStandardError(
                containing: "SIGTERM: no new task starts", seconds: 120)
            Self.level(0, key: key, server: server)
            let (status, output) = await running.wait(seconds: 300)
            #expect(status == 143, "\(output)")
            #expect(output.contains("to repair: courier run"), "\(output)")
            repair = ["run", "job.json", "--resume"]
        case .outageThenReplay:
            Self.level(2, key: key, server: server)
            let first = try await Self.courier(["run", "job.json"], space, backend: backend)
            #expect(first.status == 1, "the outage fails tasks: \(first.stdout)")
            Self.level(0, key: key, server: server)
            repair = ["replay", space.logs.appendingPathComponent("e2e").path, "--job", "job.json"]
        case .replayThenResume:
            Self.level(2, key: key, server: server)
            _ = try await Self.courier(["run", "job.json"], space, backend: backend)
            Self.level(1, key: key, server: server)
            let replay = try await Self.courier(
                ["replay", space.logs.appendingPathComponent("e2e").path, "--job", "job.json"],
                space, backend: backend)
            #expect(replay.status == 1, "level 1 still fails some: \(replay.stdout)")
            #expect(replay.stdout.contains("not done"), "\(replay.stdout)")
            Self.level(0, key: key, server: server)
            repair = ["run", "job.json", "--resume"]
        case .resumeThenReplay:
            Self.level(2, key: key, server: server)
            _ = try await Self.courier(["run", "job.json"], space, backend: backend)
            Self.level(1, key: key, server: server)
            let resume = try await Self.courier(
                ["run", "job.json", "--resume"], space, backend: backend)
            #expect(resume.status == 1, "level 1 still fails some: \(resume.stdout)")
            Self.level(0, key: key, server: server)
            repair = ["replay", space.logs.appendingPathComponent("e2e").path, "--job", "job.json"]
        case .shardsOneKilledThenResume:
            // Requests past the first (of all four shards) wait until the test lets them go:
            // shard 2, once its log is begun, is killed mid-run, and the others go on once
            // released. (With the twentieth, shard 2 had sometimes sent all of its own.)
            Self.level(0, holdAfter: 1, key: key, server: server)
            var shards: [CourierBinary.Running] = []
            for index in 0..<4 {
                shards.append(
                    try Self.launch(
                        ["run", "job.json", "--shard", "\(index)/4"], space, backend: backend))
            }
            try await Self.waitForRequests(0, in: space, suffix: "shard-2-of-4.jsonl")
            try await Self.waitUntilHeld(key: key, server: server)
            shards[2].send(SIGKILL)
            // Let the other shards' held requests go.
            Self.level(0, key: key, server: server)
            for (index, shard) in shards.enumerated() {
                let (status, output) = await shard.wait(seconds: 300)
                if index != 2 { #expect(status == 0, "shard \(index): \(output)") }
                if index == 2 {
                    Self.expectKilledMidRun(
                        status: status, folder: space.logs.appendingPathComponent("e2e"),
                        suffix: "shard-2-of-4.jsonl", total: outputCount, atLeast: 0)
                }
            }
            Self.level(0, key: key, server: server)
            repair = ["run", "job.json", "--resume"]
        }

        let repaired = try await Self.courier(repair, space, backend: backend)
        if path == .killThenResume || path == .killThenResumeLog {
            // The thirteenth request to arrive, the one held when the kill landed, is w3 or w4
            // (the twelfth and thirteenth sent): a write whose effect was made, its answer lost.
            #expect(
                repaired.stdout.contains(
                    "1 write of unknown outcome sent again with its idempotency key"),
                "\(repaired.stdout)")
        }
        #expect(repaired.status == 0, "\(repaired.stdout) \(repaired.stderr)")
        if [.outageThenReplay, .replayThenResume, .resumeThenReplay].contains(path) {
            // The outage cut the records listing on page 4: the repair goes on from there.
            #expect(
                repaired.stderr.contains(
                    "task recs goes on from page 4: pages 1-3 were kept by run"),
                "\(repaired.stderr)")
        }
        #expect(
            repaired.stdout.contains("the job's history: every task done"), "\(repaired.stdout)")
        #expect(
            Self.differences(Self.outputs(space), expected).isEmpty,
            "the outputs are a clean run's, byte for byte: \(Self.differences(Self.outputs(space), expected))"
        )
        let finals = try Self.finalOutcomes(space)
        #expect(finals.count == Self.taskCount(records: records), "\(finals.keys.sorted())")
        let notOK = finals.filter { $0.value != "ok" }
        #expect(notOK.isEmpty, "\(notOK)")
        // Each write was taken once, however the run was cut and repaired.
        #expect(Self.effects(key: key, server: server) == 4)

        // The same repair again, twice: nothing left to do, nothing changes.
        for _ in 0..<2 {
            let again = try await Self.courier(
                repair[0] == "replay" || path == .killThenResumeLog
                    ? ["run", "job.json", "--resume"] : repair, space,
                backend: backend)
            #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
            // Nothing is sent: every task is done, so no task takes the login's token (it had
            // been sent again each time, its secret token never kept: ResumeNeeds).
            let done = Self.taskCount(records: records)
            #expect(again.stdout.contains("(\(done) done by earlier runs)"), "\(again.stdout)")
            #expect(again.stdout.contains(" 0 requests "), "\(again.stdout)")
            let rerun = Self.differences(Self.outputs(space), expected)
            #expect(rerun.isEmpty, "\(rerun)")
            #expect(Self.effects(key: key, server: server) == 4)
        }
    }
}
