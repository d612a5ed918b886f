import CourierTestSupport
import Foundation
import Testing

/// `courier report` streams its logs: half a million lines in bounded memory, measured on the
/// built binary in a process of its own.
@Suite("courier report: memory")
struct ReportMemoryTests {
    /// One `request` line of a log, for task `t<n>`.
    static func line(_ n: Int, outcome: String = "ok") -> String {
        let millis = String(n % 1000 + 1000).dropFirst()
        return
            #"{"event":"request","ts":"2026-01-01T00:00:00.\#(millis)Z","run":"r","job":"j","task":"t\#(n)","attempt":1,"method":"GET","url":"http://h/\#(n)","requestHeaders":{"Accept":"*/*"},"status":200,"timings":{"totalMs":\#(n % 97)},"outcome":"\#(outcome)"}"#
    }

    @Test("courier report reads half a million lines in bounded memory")
    func halfAMillionLinesInBoundedMemory() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "big-\(UUID().uuidString).jsonl")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        // Seconds of CPU: on a thread of its own, so that the two threads of the cooperative
        // pool stay free for the tests that run alongside (some of them wait on a clock).
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    let handle = try FileHandle(forWritingTo: file)
                    var block = ""
                    for n in 0..<500_000 {
                        block += Self.line(n) + "\n"
                        if n % 10_000 == 9_999 {
                            handle.write(Data(block.utf8))
                            block = ""
                        }
                    }
                    try handle.close()
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            }
        }
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        // Memory is measured in a process of its own (this one runs other tests alongside):
        // `courier report` over the file, its peak RSS as Python's rusage of a child sees it.
        let measure = """
            import resource, subprocess, sys
            out = subprocess.run([sys.argv[1], "report", "--json", sys.argv[2]], capture_output=True, check=True)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out.stdout.count(b'"requests":500000'))
            """
        let result = try await CourierBinary.run(
            ["-c", measure, CourierBinary.url.path, file.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
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
