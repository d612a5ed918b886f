import CourierTestSupport
import Foundation
import Testing

/// `"write": "merge"` over a million records in bounded memory: a file of 1,000,005 records
/// merged with a million new ones (every tenth a tombstone), sorted runs spilled at 16 MiB.
@Suite("records at scale")
struct RecordsScaleTests {
    /// Writes the records file, runs courier under it, and checks the result: a Python parent
    /// that prints courier's exit status, its peak RSS in KiB (`ru_maxrss`, the kernel's own
    /// count), the wall time, whether the file's SHA-256 is that of the lines it expects, and
    /// how many lines it has.
    static let script = """
        import hashlib, resource, subprocess, sys, time
        path, count, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
        old = lambda i: b'{"id":%d,"name":"user-%d","v":0}\\n' % (i, i)
        with open(path, "wb") as f:
            for i in range(1, count + 6):
                f.write(old(i))
        start = time.time()
        status = subprocess.run(command).returncode
        wall = time.time() - start
        expected, lines = hashlib.sha256(), 0
        for i in range(1, count + 6):
            if i > count:
                expected.update(old(i))
            elif i % 10:
                expected.update(b'{"id":%d,"name":"user-%d","v":1}\\n' % (i, i))
            else:
                continue
            lines += 1
        with open(path, "rb") as f:
            actual = hashlib.sha256(f.read()).hexdigest()
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(status, peak, round(wall, 2), actual == expected.hexdigest(), lines)
        """

    @Test(
        "a million records merge into a million-line file in bounded memory",
        .timeLimit(.minutes(10)))
    func millionRecordMerge() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let count = 1_000_000
        try space.writeJob(
            tasks: #"""
                {"id": "everyone", "path": "/records/gen",
                 "query": {"count": "\#(count)", "size": "20000", "v": "1", "deleted_every": "10"},
                 "paginate": {"next": {"linkHeader": "next"}}, "timeout": 120,
                 "records": {"from": "/items/*", "to": "records/users.jsonl", "write": "merge",
                             "key": "/id", "deleted": "/deleted"}}
                """#)
        let file = space.folder.appendingPathComponent("out/records/users.jsonl")
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let result = try await CourierBinary.run(
            [
                "-c", Self.script, file.path, String(count), CourierBinary.url.path, "run",
                "job.json", "--log-dir", space.logs.path, "--backend", "curl", "--no-progress",
                "--quiet",
            ],
            executable: URL(fileURLWithPath: "/usr/bin/python3"),
            environment: ["COURIER_RECORDS_RUN_BYTES": String(16 << 20)],
            directory: space.folder)
        let fields =
            result.stdout.split(separator: "\n").last?.split(separator: " ").map(String.init)
            ?? []
        try #require(fields.count == 5, "\(result.stdout) \(result.stderr)")
        #expect(fields[0] == "0", "courier's exit status: \(result.stderr)")
        let peakKiB = Int(fields[1]) ?? -1
        let wall = Double(fields[2]) ?? -1
        #expect(fields[3] == "True", "the file holds exactly the expected lines")
        #expect(fields[4] == "900005")
        // The merge itself: from the last page's line to the end of the run.
        let lines = try space.logLines()
        let stamps = lines.compactMap { $0["ts"] as? String }.compactMap(Self.date)
        let lastPage = lines.last { $0["event"] as? String == "request" }?["ts"] as? String
        let merge = (stamps.last ?? .distantPast).timeIntervalSince(
            lastPage.flatMap(Self.date) ?? .distantFuture)
        print(
            "records at scale: 1,000,000 records merged into 1,000,005 lines (900,005 kept) in \(wall) s, the merge itself \(String(format: "%.1f", merge)) s (\(merge > 0 ? Int(Double(count) / merge) : 0) records/s); peak RSS \(peakKiB / 1024) MiB"
        )
        // Measured: 69 MiB in a debug build; a table of a million keys alone would be more.
        #expect(peakKiB > 0 && peakKiB < 160 << 10, "peak RSS \(peakKiB) KiB")
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
