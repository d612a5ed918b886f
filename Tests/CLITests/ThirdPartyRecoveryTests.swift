import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The recovery paths against a server nobody here wrote: Debian's httpbin under gunicorn on
/// loopback. Outputs after each repair are byte for byte those of a clean run.
@Suite("recovery against httpbin")
struct ThirdPartyRecoveryTests {
    /// A workspace whose job talks to httpbin: a fan-out over values httpbin echoes back
    /// (`one two!` and `three/four`, each one encoded path segment), a range saved from
    /// `/anything`, and slow `/delay` tasks that keep the run going long enough to be killed.
    static func writeJob(_ space: JobWorkspace, base: URL, name: String = "hb") throws {
        let text = #"""
            {"version": 1, "name": "\#(name)", "baseURL": "\#(base.absoluteString)", "outputDir": "out", "concurrency": 2,
             "retry": {"maxAttempts": 1},
             "tasks": [
              {"id": "slides", "path": "/anything/list?t=one%20two!&t=three/four", "capture": {"titles": {"json": "/args/t/*"}}},
              {"id": "slide-{t}", "path": "/anything/slides/{t}", "foreach": {"t": {"capture": "titles"}}, "save": "slides/{t}.json"},
              {"id": "a{n}", "path": "/anything/items/{n}", "query": {"n": "{n}"}, "foreach": {"n": {"range": [1, 16]}}, "save": "items/{n}.json"},
              {"id": "slow{n}", "path": "/delay/2", "foreach": {"n": {"range": [1, 4]}}}
             ]}
            """#
        try text.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
    }

    static func run(_ arguments: [String], in space: JobWorkspace, backend: String) async throws
        -> CourierBinary.Result
    {
        try await CourierBinary.run(
            arguments + ["--log-dir", space.logs.path, "--backend", backend, "--no-progress"],
            directory: space.folder)
    }

    @Test(
        "kill -9 then --resume against httpbin ends as a clean run, byte for byte",
        arguments: RunCommandTests.backends)
    func killThenResume(backend: String) async throws {
        let base = try await TestServers.httpbin()
        let clean = try JobWorkspace()
        defer { clean.remove() }
        try Self.writeJob(clean, base: base)
        let reference = try await Self.run(["run", "job.json"], in: clean, backend: backend)
        #expect(reference.status == 0, "\(reference.stdout) \(reference.stderr)")
        let expected = RecoveryMatrixTests.outputs(clean)
        #expect(expected.count == 2 + 16, "two slides, sixteen items")

        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, base: base)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--backend", backend,
                "--no-progress",
            ],
            directory: space.folder)
        let folder = space.logs.appendingPathComponent("hb")
        // Killed once a few requests are logged, from a thread of its own.
        await HostileValueTests.onThread {
            let deadline = Date().addingTimeInterval(300)
            while Date() < deadline {
                let names =
                    (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                let text = names.compactMap {
                    try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
                }.joined()
                if text.components(separatedBy: #""event":"request""#).count > 6 { break }
                Thread.sleep(forTimeInterval: 0.005)
            }
            running.send(SIGKILL)
        }
        let (status, _) = await running.wait(seconds: 300)
        // 1 + 2 + 16 + 4 requests; the four slow ones hold the run for 4 s after the rest.
        RecoveryMatrixTests.expectKilledMidRun(status: status, folder: folder, total: 23)
        let resumed = try await Self.run(
            ["run", "job.json", "--resume"], in: space, backend: backend)
        #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
        #expect(resumed.stdout.contains("every task done"), "\(resumed.stdout)")
        let differences = RecoveryMatrixTests.differences(
            RecoveryMatrixTests.outputs(space), expected)
        #expect(differences.isEmpty, "\(differences)")
    }

    /// The user fixes the job after a failed night (the items' path was wrong) and replays
    /// the failures from the fixed job: every task is rebuilt from it and saved.
    @Test(
        "a failed night, a fixed job, replay --job: the outputs of a clean run of the fixed job",
        arguments: RunCommandTests.backends)
    func replayFromAFixedJob(backend: String) async throws {
        let base = try await TestServers.httpbin()
        let clean = try JobWorkspace()
        defer { clean.remove() }
        try Self.writeJob(clean, base: base)
        #expect(try await Self.run(["run", "job.json"], in: clean, backend: backend).status == 0)
        let expected = RecoveryMatrixTests.outputs(clean)

        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, base: base)
        let job = space.folder.appendingPathComponent("job.json")
        let good = try String(contentsOf: job, encoding: .utf8)
        // The broken night: the items' path answers 404.
        try good.replacingOccurrences(of: "/anything/items/{n}", with: "/status/404")
            .write(to: job, atomically: true, encoding: .utf8)
        let night = try await Self.run(["run", "job.json"], in: space, backend: backend)
        #expect(night.status == 1)
        try good.write(to: job, atomically: true, encoding: .utf8)
        let replay = try await Self.run(
            ["replay", space.logs.appendingPathComponent("hb").path, "--job", "job.json"],
            in: space, backend: backend)
        #expect(replay.status == 0, "\(replay.stdout) \(replay.stderr)")
        #expect(replay.stdout.contains("every task done"), "\(replay.stdout)")
        let differences = RecoveryMatrixTests.differences(
            RecoveryMatrixTests.outputs(space), expected)
        #expect(differences.isEmpty, "\(differences)")
        // And the history agrees: nothing left for --resume, not even the listing, whose
        // captured titles were kept.
        let resume = try await Self.run(
            ["run", "job.json", "--resume"], in: space, backend: backend)
        #expect(resume.stdout.contains(" 0 requests "), "\(resume.stdout)")
    }
}
