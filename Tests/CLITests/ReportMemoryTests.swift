import CourierTestSupport
import Foundation
import Testing

/// `courier report` streams its logs: half a million lines in bounded memory, measured on the
/// built binary in a process of its own.
@Suite("courier report: memory")
struct ReportMemoryTests {
    @Test("courier report reads half a million lines in bounded memory")
    func halfAMillionLinesInBoundedMemory() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "big-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        // Written and measured in a Python process of its own: writing the lines from this
        // (debug) test process took seconds of CPU from the tests running alongside, and this
        // process's memory says nothing of courier's. Each line is a `request` line of task
        // `t<n>`; the peak RSS is Python's rusage of its child, the kernel's own count.
        let measure = """
            import resource, subprocess, sys
            courier, path = sys.argv[1], sys.argv[2]
            with open(path, "w") as f:
                for n in range(500000):
                    f.write('{"event":"request","ts":"2026-01-01T00:00:00.%03dZ","run":"r","job":"j",'
                            '"task":"t%d","attempt":1,"method":"GET","url":"http://h/%d",'
                            '"requestHeaders":{"Accept":"*/*"},"status":200,'
                            '"timings":{"totalMs":%d},"outcome":"ok"}\\n' % (n % 1000, n, n, n % 97))
            out = subprocess.run([courier, "report", "--json", path], capture_output=True, check=True)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out.stdout.count(b'"requests":500000'))
            """
        let result = try await CourierBinary.run(
            ["-c", measure, CourierBinary.url.path, file.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        let size = attributes?[.size] as? Int ?? 0
        let figures = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(figures.count == 2, "\(result.stdout) \(result.stderr)")
        if figures.count == 2 {
            #expect(figures[1] == 1, "the report counted every line")
            // A sanitized build (`make sanitize`) maps shadow memory: its RSS says nothing.
            if ProcessInfo.processInfo.environment["COURIER_SANITIZED"] == nil {
                #expect(
                    figures[0] < 64 << 10,
                    "peak RSS \(figures[0] >> 10) MiB reading \(size >> 20) MiB")
            }
        }
    }
}
