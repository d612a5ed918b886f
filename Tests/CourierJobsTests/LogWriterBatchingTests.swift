import Courier
import Foundation
import Testing

@testable import CourierJobs

/// A batching ``LogWriter`` (the one `courier run` uses): lines gather and are written in
/// order, whole, soon; a line written `now` is on file when `write` returns, after every line
/// before it.
@Suite("LogWriter batching")
struct LogWriterBatchingTests {
    static func file() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "logwriter-\(UUID().uuidString).jsonl")
    }

    static func lines(_ file: URL) throws -> [String] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    static func line(_ number: Int) -> [UInt8] {
        Array("{\"n\":\(number)}\n".utf8)
    }

    @Test("a line written now is on file at once, after every line before it")
    func nowWritesWhatWaitsFirst() throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try LogWriter(url: file, batching: true)
        for number in 0..<50 { try writer.write(endedLine: Self.line(number)) }
        try writer.write(endedLine: Self.line(50), now: true)
        #expect(try Self.lines(file) == (0...50).map { "{\"n\":\($0)}" })
    }

    @Test("batched lines reach the file in order, whole, without a flush")
    func batchedLinesArriveSoon() async throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try LogWriter(url: file, batching: true)
        // From several threads at once: each thread's lines stay in its order.
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for number in 0..<2_000 {
                        try? writer.write(endedLine: Self.line(thread * 10_000 + number))
                    }
                }
            }
        }
        // Written by the flush the first waiting line scheduled (2 ms), or sooner when the
        // waiting lines passed the batch limit; 300 s is only a hang guard.
        let deadline = ContinuousClock.now + .seconds(300)
        var lines = try Self.lines(file)
        while lines.count < 8_000, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            lines = try Self.lines(file)
        }
        #expect(lines.count == 8_000)
        let numbers = lines.compactMap { line -> Int? in
            guard line.hasPrefix("{\"n\":"), line.hasSuffix("}") else { return nil }
            return Int(line.dropFirst(5).dropLast())
        }
        #expect(numbers.count == 8_000, "every line whole")
        for thread in 0..<4 {
            let own = numbers.filter { $0 / 10_000 == thread }
            #expect(own == (0..<2_000).map { thread * 10_000 + $0 }, "thread \(thread)")
        }
        #expect(writer.failure == nil)
    }

    @Test("the writer's end writes what still waits")
    func deinitWritesTheRest() throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            let writer = try LogWriter(url: file, batching: true)
            for number in 0..<10 { try writer.write(endedLine: Self.line(number)) }
        }
        #expect(try Self.lines(file).count == 10)
    }

    @Test("a request that may not be sent twice has its line on file when the log returns")
    func nonRepeatableRequestLineIsWrittenAtOnce() throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try LogWriter(url: file, batching: true)
        let log = RunLog(writer: writer, run: "r1", job: "j", redactor: Redactor(secrets: []))
        func attempt(_ method: HTTPMethod) -> RetryAttempt {
            let request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/x")!, method: method)
            let response = HTTPResponse(
                status: 200, headers: [:], body: Data(), url: request.url,
                timings: HTTPTimings(total: 0.001))
            return RetryAttempt(
                request: request, number: 1, outcome: .success(response), retryDelay: nil,
                duration: 0.001, started: Date(timeIntervalSince1970: 0))
        }
        try log.request(AttemptRecord(task: "get", attempt: attempt(.get), outcome: .ok))
        try log.request(AttemptRecord(task: "post", attempt: attempt(.post), outcome: .ok))
        let tasks = try Self.lines(file).map { line -> String in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["task"] as? String ?? ""
        }
        #expect(tasks == ["get", "post"])
    }
}
