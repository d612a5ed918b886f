import CourierTestSupport
import Foundation
import Testing

/// A disk that fills up mid-run, both ways: a small tmpfs where the tests may mount one (root
/// with CAP_SYS_ADMIN, as in CI's container; skipped with its reason elsewhere), and a file
/// size limit (`ulimit -f`), which fails writes the same way, everywhere.
@Suite("a full disk")
struct FullDiskTests {
    /// Mounts a 512 KiB tmpfs on `folder`; false when it cannot be mounted here.
    static func mountSmallDisk(at folder: URL) -> Bool {
        guard
            let mount = try? ChildProcess(
                "/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", folder.path],
                stderr: .null)
        else { return false }
        return mount.waitUntilExit() == 0
    }

    /// Whether a tmpfs can be mounted here (root with CAP_SYS_ADMIN), tried once on a scratch
    /// folder; the tmpfs case is reported as skipped, with this reason, where it cannot.
    static let canMount: Bool = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-mount-probe-\(UUID().uuidString)")
        guard
            (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true))
                != nil
        else { return false }
        defer { try? FileManager.default.removeItem(at: folder) }
        guard mountSmallDisk(at: folder) else { return false }
        unmount(folder)
        return true
    }()

    /// How the disk fills: a small tmpfs (ENOSPC) or a file size limit (`ulimit -f`, EFBIG).
    enum Disk: String, CaseIterable, CustomTestStringConvertible {
        case tmpfs, fileSizeLimit
        var testDescription: String { rawValue }
    }

    @Test(
        "on a small tmpfs",
        .enabled(if: canMount, "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)"),
        arguments: ["curl", "urlsession"])
    func fillsUpATmpfs(backend: String) async throws {
        try await fillsUp(backend: backend, disk: .tmpfs)
    }

    @Test("under a file size limit", arguments: ["curl", "urlsession"])
    func fillsUpUnderAFileSizeLimit(backend: String) async throws {
        try await fillsUp(backend: backend, disk: .fileSizeLimit)
    }

    static func unmount(_ folder: URL) {
        (try? ChildProcess("/bin/umount", [folder.path]))?.waitUntilExit()
    }

    /// Outputs and the log on a disk that fills: saved files whole, no temporary left, every
    /// log line complete, the run says the log is incomplete and exits 1.
    func fillsUp(backend: String, disk kind: Disk) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        // The job's outputDir ("out") is the small disk, and the log goes there too.
        let disk = space.folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let mounted = kind == .tmpfs
        if mounted { try #require(Self.mountSmallDisk(at: disk), "the tmpfs was mounted") }
        defer { if mounted { Self.unmount(disk) } }
        // 200 bodies of 100,000 bytes: five fit on the tmpfs; under the file size limit
        // (64 KiB a file) none does. Either way the log's ~700-byte lines outgrow the room.
        try space.writeJob(
            tasks: #"""
                {"id": "b{n}", "path": "/bytes", "query": {"n": "100000", "k": "{n}"},
                 "foreach": {"n": {"range": [1, 200]}}, "save": "b{n}.bin"}
                """#,
            extra: #""concurrency": 2,"#)
        let logs = disk.appendingPathComponent("logs")
        let arguments = [
            "run", "job.json", "--log-dir", logs.path, "--backend", backend, "--no-progress",
        ]
        let result =
            mounted
            ? try await CourierBinary.run(arguments, directory: space.folder)
            : try await CourierBinary.run(
                ["-c", "ulimit -f 64 && exec \"$0\" \"$@\"", CourierBinary.url.path] + arguments,
                executable: URL(fileURLWithPath: "/bin/bash"), directory: space.folder)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("the log is incomplete"), "\(result.stderr)")
        let reason = mounted ? "No space left on device" : "File too large"
        #expect(result.stderr.contains(reason), "\(result.stderr)")

        // Each saved output is whole; nothing half-written or temporary is left behind.
        let out = disk
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? [])
            .filter { $0 != "logs" }
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(names)")
        if mounted { #expect(names.count >= 1, "some outputs fitted") }
        for name in names {
            let data = try Data(contentsOf: out.appendingPathComponent(name))
            #expect(data.count == 100_000 && BytePattern.matches(data), "\(name) is whole")
        }

        // Every line that is in the log is whole, and the log starts as a log does.
        let folder = logs.appendingPathComponent("e2e")
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        let data = try Data(contentsOf: folder.appendingPathComponent(file))
        #expect(data.last == 0x0A, "the file ends with a whole line")
        let lines = data.split(separator: 0x0A)
        #expect(lines.count > 10)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            #expect(
                object != nil,
                "a whole JSON line: \(String(decoding: line.prefix(80), as: UTF8.self))")
        }
        let first = try JSONSerialization.jsonObject(with: Data(lines[0])) as? [String: Any]
        #expect(first?["event"] as? String == "run.start")
        if let last = try JSONSerialization.jsonObject(with: Data(lines.last!)) as? [String: Any],
            last["event"] as? String == "run.end"
        {
            #expect(last["incomplete"] != nil, "a run.end that got written says lines are missing")
        }
    }

    @Test("a log folder that cannot be made is an exit-2 error before any request is sent")
    func unwritableLogFolder() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("no-log-folder")
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/json", "query": {"key": "\#(key)"}}"#)
        // A file where the folder should be (root ignores permission bits, so a file in the
        // way is what fails for every user).
        let blocker = space.folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let result = try await CourierBinary.run(
            ["run", "job.json", "--log-dir", blocker.appendingPathComponent("logs").path],
            directory: space.folder)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not-a-folder"), "\(result.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 0, "nothing was sent")
    }
}
