import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Values and files chosen by an attacker: a captured value never climbs or ends a path, a
/// link planted while a task waits never receives its body, and `validate` checks paths on
/// the bytes the file system reads.
@Suite("hostile values")
struct HostileValueTests {
    @Test(
        "a captured value is one path segment: no climbing, no injected query",
        arguments: RunCommandTests.backends)
    func capturedValuesStayInTheirSegment(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("segment")
        let logins = #"["../admin/delete", "x?role=admin", "a#frag", "50%", "..", "ok"]"#
        let source = "/json?v=" + URLEncoding.encode(#"{"logins": \#(logins)}"#)
        try space.writeJob(
            tasks: #"""
                {"id": "list", "url": "\#(space.server.baseURL.absoluteString)\#(source)", "capture": {"logins": {"json": "/logins/*"}}},
                {"id": "del-{login}", "method": "DELETE", "path": "/api/users/{login}", "query": {"key": "\#(key)"},
                 "foreach": {"login": {"capture": "logins"}}, "expect": {"status": [404]}},
                {"id": "raw", "path": "/raw/{+p}", "query": {"key": "\#(key)"}, "foreach": {"p": ["a/b"]}, "expect": {"status": [404]}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "the '..' child is refused: \(result.stdout) \(result.stderr)")
        let paths = Set(try await ServerHits.of(key, on: space.server).requests.map(\.path))
        #expect(
            paths == [
                "/api/users/..%2Fadmin%2Fdelete?key=\(key)",
                "/api/users/x%3Frole%3Dadmin?key=\(key)",
                "/api/users/a%23frag?key=\(key)", "/api/users/50%25?key=\(key)",
                "/api/users/ok?key=\(key)", "/raw/a/b?key=\(key)",
            ], "\(paths.sorted())")
        let refused = try space.logLines().first { $0["event"] as? String == "task.failed" }
        #expect(refused?["task"] as? String == "del-..")
        let message = (refused?["error"] as? [String: String])?["message"] ?? ""
        #expect(message.contains("climbs the path"), "\(message)")
    }

    /// Runs `body` on a thread of its own and waits for it: steps that must land within a
    /// window are not left to a cooperative pool that other tests may be starving.
    @discardableResult
    static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Moves `folder` aside (to `moved` beside it) and puts a link to `outside` in its place.
    static func swap(_ folder: URL, for outside: URL) {
        let moved = folder.deletingLastPathComponent().appendingPathComponent("moved")
        try? FileManager.default.moveItem(at: folder, to: moved)
        try? FileManager.default.createSymbolicLink(at: folder, withDestinationURL: outside)
    }

    /// Runs the job in `space` (saving into `out/sub`), swaps `out/sub` for a link to a fresh
    /// outside folder once `ready` says so, then calls `after`; checks that nothing reached the
    /// outside folder and that the task failed with a `save` error, logged as such.
    static func swapDuringRun(
        _ space: JobWorkspace, backend: String, ready: @escaping @Sendable () -> Bool,
        after: @escaping @Sendable () -> Void = {}
    ) async throws {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outside) }
        let sub = space.folder.appendingPathComponent("out/sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress",
            ],
            directory: space.folder)
        // On a thread of its own: a loaded test run starves the cooperative pool for seconds,
        // past the windows these swaps must land in.
        await Self.onThread {
            let deadline = Date().addingTimeInterval(300)
            while !ready(), Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            Self.swap(sub, for: outside)
            after()
        }
        let (status, stdout, stderr) = await running.exit(seconds: 300)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty,
            "nothing, not even a temporary, lands where the link points")
        #expect(status == 1, "the save is refused, not logged ok: \(stdout) \(stderr)")
        let last = try #require(try space.attempts("big").last)
        #expect(last["outcome"] as? String == "failed")
        #expect((last["error"] as? [String: String])?["kind"] == "save", "\(last)")
    }

    @Test(
        "a folder swapped for a link while the body downloads never gets the body",
        arguments: RunCommandTests.backends)
    func linkPlantedMidDownload(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let gate = FixtureServer.uniqueKey("planted")
        // The body streams to a temporary made before the request is sent; the gate holds
        // the body's end until the folder has been swapped.
        try space.writeJob(
            tasks:
                #"{"id": "big", "path": "/gate", "query": {"name": "\#(gate)"}, "save": "sub/x.txt", "timeout": 900}"#
        )
        let sub = space.folder.appendingPathComponent("out/sub").path
        let toggle = space.server.url("/toggle/on?name=\(gate)")
        try await Self.swapDuringRun(
            space, backend: backend,
            ready: { !((try? FileManager.default.contentsOfDirectory(atPath: sub)) ?? []).isEmpty },
            after: { _ = BlockingFetch.json(toggle) })
    }

    /// The case found: the temporary is made before the first attempt, the folder is swapped
    /// after it (here while the retry's answer is held), and the second attempt's body went
    /// through the link. The server holds the retry's answer until the swap is done: a 3 s
    /// backoff as the window failed once on a loaded machine.
    @Test(
        "a folder swapped for a link between a task's attempts never gets the body",
        arguments: RunCommandTests.backends)
    func linkPlantedDuringRetry(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("retrylink")
        let toggle = FixtureServer.uniqueKey("retrylink-release")
        try space.writeJob(
            tasks:
                #"{"id": "big", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1", "hold_until": "\#(toggle)"}, "save": "sub/x.json", "timeout": 900}"#,
            extra: #""retry": {"maxAttempts": 2, "initialDelay": 0.1, "jitter": false},"#)
        let hits = space.server.url("/hits?key=\(key)")
        let release = space.server.url("/toggle/on?name=\(toggle)")
        try await Self.swapDuringRun(
            space, backend: backend,
            ready: { (BlockingFetch.json(hits)?["count"] as? Int ?? 0) >= 2 },
            after: { _ = BlockingFetch.json(release) })
        #expect(try await ServerHits.of(key, on: space.server).count == 2, "the retry was sent")
    }

    /// U+E000 marks the braces of environment values inside templates: in a job file, or in
    /// a value a template takes from the environment, it would be sent as "{". Refused, with
    /// where it stands, and nothing is sent.
    @Test("U+E000 in a job file or in a template's environment value is refused, not sent as '{'")
    func reservedCharacterIsRefused() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("e000")
        let cases: [(tasks: String, environment: [String: String], expected: String)] = [
            (
                #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)", "v": "x\#u{E000}y"}}"#,
                [:], "job.json:1:"
            ),
            (
                #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)", "v": "x\uE000y"}}"#,
                [:], "job.json:1:"
            ),
            (
                #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)", "v": "${env:ODD}"}}"#,
                ["ODD": "p\u{E000}q"], "${env:ODD} holds U+E000"
            ),
        ]
        for (tasks, environment, expected) in cases {
            try space.writeJob(tasks: tasks)
            let result = try await space.run(backend: "curl", environment: environment)
            #expect(result.status == 2, "\(tasks): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("U+E000"), "\(result.stderr)")
            #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
        }
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing was sent")
        // An escaped backslash before "ue000" is text, not the escape: the job is fine.
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)", "v": "x\\ue000"}}"#)
        let plain = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(plain.status == 0, "\(plain.stderr)")
    }

    @Test("a link planted as outputDir/.courier is refused, never written through")
    func courierFolderLink() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outside) }
        try "precious".write(
            to: outside.appendingPathComponent("other.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            at: space.folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: space.folder.appendingPathComponent("out/.courier"), withDestinationURL: outside)
        try space.writeJob(
            tasks:
                #"{"id": "e", "path": "/etag", "query": {"v": "1"}, "conditional": true, "save": "e.json"}"#
        )
        let result = try await space.run(backend: "curl")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["other.txt"],
            "no state, lock or temporary written through the link: \(result.stderr)")
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("symbolic link"), "\(result.stdout) \(result.stderr)")
    }

    @Test("validate checks save paths on bytes: a combining mark after '/' hides no '..'")
    func combiningMarkInSavePath() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/status/200", "save": "../\u0301x"}"#)
        let result = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(result.status == 2, "\(result.stdout)")
        #expect(result.stderr.contains("escapes outputDir"), "\(result.stderr)")
    }

    @Test("values cannot forge lines or drive the terminal in the plan or on stderr")
    func controlCharactersInValues() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // A newline that would forge a summary line, a C1 CSI (U+009B), an ESC, a bidi override.
        try space.writeJob(
            tasks: #"""
                {"id": "v-{x}", "path": "/status/500", "foreach": {"x": ["a\ncourier: e2e: 1 task, 1 ok", "b\u009b31m", "c\u001b[2J", "d\u202e"]}}
                """#, extra: #""retry": {"maxAttempts": 1},"#)
        let plan = try await CourierBinary.run(
            ["run", "job.json", "--dry-run"], directory: space.folder)
        #expect(plan.status == 0, "\(plan.stderr)")
        let lines = plan.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 6, "four tasks, the summary and the last newline: \(lines)")
        for forbidden in ["\u{9B}", "\u{1B}", "\u{202E}"] {
            #expect(!plan.stdout.contains(forbidden), "\(forbidden.unicodeScalars.first!.value)")
        }
        let run = try await space.run(backend: "curl")
        #expect(run.status == 1)
        // One reason (status 500): the first task's line, and one that counts the other three.
        let failures = run.stderr.split(separator: "\n").filter { $0.contains("failed") }
        #expect(failures.count == 2, "no forged line: \(run.stderr)")
        #expect(
            failures.last?.contains("3 more tasks failed the same way") == true, "\(run.stderr)")
        #expect(!run.stderr.contains("\u{9B}") && !run.stderr.contains("\u{1B}"))
    }
}

/// `bodyFile` uploads: regular files only, streamed as sent, never held in memory.
@Suite("bodyFile uploads")
struct BodyFileUploadTests {
    @Test("a device or FIFO as bodyFile is refused by validate and run, at once")
    func deviceRefused() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "u", "method": "PUT", "path": "/digest", "bodyFile": "/dev/urandom"}"#)
        let validate = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(validate.status == 2)
        #expect(validate.stderr.contains("not a regular file"), "\(validate.stderr)")
        let run = try await space.run(["--dry-run"], backend: "curl")
        #expect(run.status == 2, "\(run.stdout)")
    }

    /// Peak RSS of `courier ARGS`, measured by a parent Python process (`ru_maxrss` of its
    /// children, in KiB), with courier's own exit status.
    static func peakRSS(_ arguments: [String], in folder: URL) async throws -> (Int32, Int) {
        let script = """
            import resource, subprocess, sys
            done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let result = try await CourierBinary.run(
            ["-c", script, CourierBinary.url.path] + arguments,
            executable: URL(fileURLWithPath: "/usr/bin/python3"), directory: folder)
        let parts = result.stdout.split(separator: " ").map {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        return (Int32(parts.first ?? -1), parts.count > 1 ? parts[1] : -1)
    }

    @Test(
        "four 128 MiB uploads at once stay in flat memory; a dry run never reads the file",
        arguments: RunCommandTests.backends)
    func uploadsStream(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let file = space.folder.appendingPathComponent("big.bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 128 << 20)
        try handle.close()
        try space.writeJob(
            tasks:
                #"{"id": "u{n}", "method": "PUT", "path": "/digest", "bodyFile": "big.bin", "foreach": {"n": {"range": [1, 4]}}}"#,
            extra: #""concurrency": 4, "timeout": 120,"#)
        let (status, peak) = try await Self.peakRSS(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress",
            ],
            in: space.folder)
        #expect(status == 0)
        #expect(peak > 0 && peak < 96 << 10, "peak RSS \(peak) KiB for 512 MiB of uploads")
        let sent = try space.logLines().filter { $0["event"] as? String == "request" }
        #expect(sent.count == 4)
        #expect(sent.allSatisfy { $0["bytesSent"] as? Int == 128 << 20 })
        let (dryStatus, dryPeak) = try await Self.peakRSS(
            ["run", "job.json", "--dry-run"], in: space.folder)
        #expect(dryStatus == 0)
        #expect(dryPeak > 0 && dryPeak < 64 << 10, "dry run peak RSS \(dryPeak) KiB")
    }
}
