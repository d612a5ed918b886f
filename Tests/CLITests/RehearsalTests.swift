import CourierTestSupport
import Foundation
import Testing

/// Offline rehearsal (issue 42, item 2): `courier run JOB --record DIR` keeps every answer,
/// `--offline DIR` runs the whole job against them without a network (pages, fan-out,
/// captures, a login's token, records, a `since` cursor, a retry) and ends with the recorded
/// run's outputs byte for byte; a changed job names the request the recording lacks.
@Suite("offline rehearsal")
struct RehearsalTests {
    /// A login whose token the users need (one of them in its query too: the rehearsal's
    /// token is `<redacted>`, as recorded, and a trial saw such a request "not in the
    /// recording"), a listing by Link pages whose ids fan out, an
    /// incremental listing into records from the cursor an earlier run left, and a flaky
    /// endpoint retried once.
    static func writeJob(_ space: JobWorkspace, key: String, total: Int = 6) throws {
        try space.writeJob(
            tasks: #"""
                {"id": "login", "method": "POST", "path": "/sync/login", "query": {"key": "\#(key)"},
                 "json": {"password": "${env:SYNC_PASSWORD}"}, "capture": {"token": {"json": "/access_token"}}},
                {"id": "users", "path": "/sync/users", "query": {"key": "\#(key)"}, "auth": {"bearer": "{token}"},
                 "save": "users.json"},
                {"id": "user-1", "path": "/sync/users/1", "query": {"key": "\#(key)", "t": "{token}"},
                 "auth": {"bearer": "{token}"}, "save": "user-1.json"},
                {"id": "list", "path": "/pages", "query": {"style": "link", "total": "\#(total)", "size": "2"},
                 "paginate": {"next": {"linkHeader": "next"}}, "capture": {"ids": {"json": "/items/*/id"}}},
                {"id": "item-{id}", "path": "/echo", "query": {"id": "{id}"}, "foreach": {"id": {"capture": "ids"}},
                 "save": "items/{id}.json"},
                {"id": "sync", "path": "/store/items", "query": {"key": "\#(key)", "size": "2", "since": "{since}"},
                 "paginate": {"next": {"linkHeader": "next"}},
                 "since": {"max": "/items/*/updated_at", "start": "1970-01-01T00:00:00Z"},
                 "records": {"from": "/items/*", "to": "records/items.jsonl", "write": "merge", "key": "/id"}},
                {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"},
                 "retry": {"maxAttempts": 2, "initialDelay": 0.01}, "save": "flaky.json"},
                {"id": "moved", "path": "/redirect", "query": {"to": "/echo?moved=1", "status": "302"},
                 "save": "moved.json"}
                """#,
            extra: #""concurrency": 2,"#)
    }

    static let environment = ["SYNC_PASSWORD": "hunter22"]

    /// `courier run job.json --offline DIR` (a rehearsal keeps its log beside its recording).
    static func rehearse(_ space: JobWorkspace, _ recording: URL, _ extra: [String] = [])
        async throws -> CourierBinary.Result
    {
        try await CourierBinary.run(
            ["run", "job.json", "--offline", recording.path, "--no-progress"] + extra,
            environment: environment, directory: space.folder)
    }

    static func put(_ space: JobWorkspace, key: String, ids: ClosedRange<Int>) async throws {
        let records = ids.map {
            #"{"id": \#($0), "updated_at": "2026-01-01T00:00:\#(String(format: "%02d", $0))Z"}"#
        }
        try await ProbeClient().post(
            space.server.url("/store/put?key=\(key)"),
            json: Data("[\(records.joined(separator: ","))]".utf8))
    }

    static func requests(_ space: JobWorkspace, key: String) -> Int {
        BlockingFetch.json(space.server.url("/hits?key=\(key)"))?["count"] as? Int ?? -1
    }

    /// Every file under `folder`, kept captures left out (they name their run).
    static func files(_ folder: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let relative = walker?.nextObject() as? String {
            let url = folder.appendingPathComponent(relative)
            var directory: ObjCBool = false
            guard !relative.hasPrefix(".courier/captures"), !relative.hasSuffix(".lock"),
                !relative.hasPrefix(".courier/lock"),
                FileManager.default.fileExists(atPath: url.path, isDirectory: &directory),
                !directory.boolValue
            else { continue }
            files[relative] = FileManager.default.contents(atPath: url.path)
        }
        return files
    }

    @Test(
        "a recorded run rehearsed offline sends nothing and ends with its outputs, byte for byte",
        arguments: RunCommandTests.backends)
    func rehearsal(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rehearse")
        try await Self.put(space, key: key, ids: 1...3)
        try Self.writeJob(space, key: key)
        // An earlier run leaves the cursor the recorded run starts from.
        let earlier = try await space.run(backend: backend, environment: Self.environment)
        #expect(earlier.status == 0, "\(earlier.stderr)")
        try await Self.put(space, key: key, ids: 4...7)
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(
            ["--record", recording.path], backend: backend, environment: Self.environment)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let sent = Self.requests(space, key: key)
        let outputs = Self.files(space.folder.appendingPathComponent("out"))
        #expect(outputs["records/items.jsonl"] != nil && outputs["items/5.json"] != nil)

        let rehearsed = try await Self.rehearse(space, recording, ["--backend", backend])
        #expect(rehearsed.status == 0, "\(rehearsed.stderr)")
        #expect(Self.requests(space, key: key) == sent, "the rehearsal sent nothing")
        let rehearsals = recording.appendingPathComponent("rehearsals")
        let runs = try FileManager.default.contentsOfDirectory(atPath: rehearsals.path)
        #expect(runs.count == 1)
        let rehearsal = rehearsals.appendingPathComponent(runs.first ?? "?")
        let rehearsedOutputs = Self.files(rehearsal.appendingPathComponent("out"))
        #expect(
            rehearsedOutputs == outputs,
            "\(Set(rehearsedOutputs.keys).symmetricDifference(outputs.keys).sorted()) \(rehearsedOutputs.filter { outputs[$0.key] != $0.value }.keys.sorted())"
        )
        #expect(rehearsed.stdout.contains(rehearsal.appendingPathComponent("out").path))
        // A redirected answer is logged as redirected, from where it came (trial W).
        let moved = try JobWorkspace.logLines(in: rehearsal.appendingPathComponent("logs/e2e"))
            .last { $0["event"] as? String == "request" && $0["task"] as? String == "moved" }
        #expect(moved?["redirects"] as? Int == 1, "\(moved ?? [:])")
        #expect((moved?["finalURL"] as? String)?.hasSuffix("/echo?moved=1") == true)
        // The job's own outputs and history are untouched by it.
        #expect(Self.files(space.folder.appendingPathComponent("out")) == outputs)

        // No secret in the recording: the password, and the token the login answered with.
        var written = Data()
        let walker = FileManager.default.enumerator(atPath: recording.path)
        while let relative = walker?.nextObject() as? String {
            written.append(
                FileManager.default.contents(
                    atPath: recording.appendingPathComponent(relative).path)
                    ?? Data())
        }
        #expect(written.range(of: Data("hunter22".utf8)) == nil)
        // The fixture's token for this key, which the login's body carried.
        let token = "tok-\(key)-s3cr3t"
        #expect(written.range(of: Data(token.utf8)) == nil, "the login's token is not recorded")
    }

    /// Trial UUU: a `conditional` task that keeps records from its saved copy, recorded on a
    /// night whose answers were 304s (the repo's own github-sync example, run before):
    /// the rehearsal had no saved copy to take the records from, and failed every task. The
    /// copies those 304s confirm are kept with the recording's state, their times too, so the
    /// rehearsal sends what the recorded run sent and ends with its outputs.
    @Test("a recorded night of 304s that keep records from saved copies rehearses byte for byte")
    func notModifiedRecordsRehearsed() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rehearse-304")
        try space.writeJob(
            tasks: #"""
                {"id": "u{n}", "path": "/etag", "query": {"v": "{n}", "key": "\#(key)"},
                 "foreach": {"n": {"range": [1, 3]}}, "conditional": true, "save": "users/{n}.json",
                 "records": {"from": "", "to": "records/users.jsonl", "write": "merge", "key": "/version"}},
                {"id": "plain", "path": "/etag", "query": {"v": "p", "key": "\#(key)"},
                 "conditional": true, "save": "plain.json"}
                """#)
        #expect(try await space.run(backend: "curl").status == 0)
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(["--record", recording.path], backend: "curl")
        #expect(recorded.status == 0, "\(recorded.stdout)\(recorded.stderr)")
        #expect(recorded.stdout.contains("not modified"), "\(recorded.stdout)")
        let outputs = Self.files(space.folder.appendingPathComponent("out"))
        let sent = Self.requests(space, key: key)
        for round in 1...2 {
            let rehearsed = try await Self.rehearse(space, recording)
            #expect(rehearsed.status == 0, "\(round): \(rehearsed.stdout)\(rehearsed.stderr)")
            #expect(Self.requests(space, key: key) == sent, "the rehearsal sent nothing")
            let rehearsals = recording.appendingPathComponent("rehearsals")
            let runs = try FileManager.default.contentsOfDirectory(atPath: rehearsals.path).sorted()
            let out = rehearsals.appendingPathComponent(runs.last ?? "?").appendingPathComponent(
                "out")
            let rehearsedOutputs = Self.files(out).filter { !$0.key.hasPrefix(".courier/state") }
            let expected = outputs.filter {
                !$0.key.hasPrefix(".courier/state") && $0.key != "plain.json"
            }
            #expect(
                rehearsedOutputs == expected,
                "\(Set(rehearsedOutputs.keys).symmetricDifference(expected.keys).sorted())")
        }
    }

    /// A trial's rehearsal said "not in the recording" for a refused connection: the
    /// recording had kept answers only. The error is kept too, and thrown again.
    @Test(
        "an attempt that got no answer is rehearsed as the same failure",
        arguments: RunCommandTests.backends)
    func failureRehearsed(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "ok", "path": "/echo", "save": "ok.json"},
                {"id": "closed", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/x"}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(["--record", recording.path], backend: backend)
        #expect(recorded.status == 1, "\(recorded.stderr)")
        let rehearsed = try await Self.rehearse(space, recording, ["--backend", backend])
        #expect(rehearsed.status == 1, "\(rehearsed.stderr)")
        #expect(!rehearsed.stderr.contains("not in the recording"), "\(rehearsed.stderr)")
        let failure = { (text: String) in
            text.split(separator: "\n").first { $0.contains("task closed failed") }.map(String.init)
        }
        #expect(failure(rehearsed.stderr) != nil)
        #expect(failure(rehearsed.stderr) == failure(recorded.stderr), "the same failure")
    }

    @Test("a rehearsal sends no ping and writes or pushes no metrics, wherever the run would")
    func rehearsalTellsNoOne() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rehearse-quiet")
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}}"#,
            extra:
                #""notify": {"ping": "\#(space.server.url("/echo?key=\(key)-ping").absoluteString)"},"#
        )
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(["--record", recording.path], backend: "curl")
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let pings = Self.requests(space, key: "\(key)-ping")
        #expect(pings == 2, "the recorded run pinged its start and end")
        let metrics = space.folder.appendingPathComponent("courier.prom")
        let rehearsed = try await Self.rehearse(
            space, recording,
            [
                "--metrics-file", metrics.path, "--metrics-push",
                space.server.url("/echo?key=\(key)-push").absoluteString,
            ])
        #expect(rehearsed.status == 0, "\(rehearsed.stderr)")
        #expect(rehearsed.stderr.contains("a rehearsal sends no pings and no metrics"))
        #expect(Self.requests(space, key: "\(key)-ping") == pings, "no ping")
        #expect(Self.requests(space, key: "\(key)-push") <= 0, "no push")
        #expect(!FileManager.default.fileExists(atPath: metrics.path), "no metrics file")
        #expect(Self.requests(space, key: key) == 1, "nothing sent")
    }

    @Test("a changed job rehearsed names the request its recording lacks; bad folders are refused")
    func changedJobAndRefusals() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rehearse-changed")
        try Self.writeJob(space, key: key)
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(
            ["--record", recording.path], backend: "curl", environment: Self.environment)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        try Self.writeJob(space, key: key, total: 8)
        let changed = try await Self.rehearse(space, recording)
        #expect(changed.status == 1)
        // No repair is offered: a repair would send for real what the rehearsal could not.
        #expect(
            changed.stdout.contains("; rehearsed offline: nothing was sent"), "\(changed.stdout)")
        #expect(!changed.stdout.contains("to repair"), "\(changed.stdout)")
        #expect(
            changed.stderr.contains(
                "not in the recording \(recording.path): GET \(space.server.baseURL.absoluteString)/pages?style=link&total=8&size=2"
            ),
            "\(changed.stderr)")
        let again = try await space.run(
            ["--record", recording.path], backend: "curl", environment: Self.environment)
        #expect(again.status == 2)
        #expect(again.stderr.contains("the folder holds files already"), "\(again.stderr)")
        let missing = try await Self.rehearse(space, space.folder.appendingPathComponent("none"))
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no recording there"), "\(missing.stderr)")
        for extra in [["--resume"], ["--dry-run"], ["--log-dir", space.logs.path]] {
            let refused = try await Self.rehearse(space, recording, extra)
            #expect(refused.status == 2, "\(extra)")
            #expect(refused.stderr.contains("go with a plain run"), "\(extra): \(refused.stderr)")
        }
        let dry = space.folder.appendingPathComponent("dry")
        let plan = try await space.run(
            ["--record", dry.path, "--dry-run"], backend: "curl", environment: Self.environment)
        #expect(plan.status == 2)
        #expect(!FileManager.default.fileExists(atPath: dry.path), "a refused run leaves nothing")
    }

    /// Trial BB: each request a rehearsal's recording lacked was its own reason (its URL in
    /// it): ten lines, then "141 more tasks did not end ok, in 141 other ways". A reason that
    /// names its request's URL is grouped by the rest.
    @Test("a rehearsal's misses are one reason, counted, whatever their URLs")
    func missesAreOneReason() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("rehearse-misses")
        func job(_ range: String) throws {
            try space.writeJob(
                tasks: #"""
                    {"id": "e{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": \#(range)}}}
                    """#, extra: #""retry": {"maxAttempts": 1},"#)
        }
        try job("[1, 2]")
        let recording = space.folder.appendingPathComponent("rec")
        let recorded = try await space.run(["--record", recording.path], backend: "curl")
        #expect(recorded.status == 0, "\(recorded.stderr)")
        try job("[3, 14]")
        let rehearsed = try await Self.rehearse(space, recording)
        #expect(rehearsed.status == 1)
        let lines = rehearsed.stderr.split(separator: "\n").filter {
            $0.contains("not in the recording")
        }
        #expect(lines.count == 2, "\(rehearsed.stderr)")
        #expect(
            rehearsed.stderr.contains("11 more tasks failed the same way: not in the recording"),
            "\(rehearsed.stderr)")
        #expect(rehearsed.stderr.contains("GET (its URL)"), "\(rehearsed.stderr)")
    }
}
