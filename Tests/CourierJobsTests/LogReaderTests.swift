import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// The one streaming log reader every log consumer uses.
@Suite("LogReader")
struct LogReaderTests {
    static func line(_ n: Int, outcome: String = "ok") -> String {
        let millis = String(n % 1000 + 1000).dropFirst()
        return
            #"{"event":"request","ts":"2026-01-01T00:00:00.\#(millis)Z","run":"r","job":"j","task":"t\#(n)","attempt":1,"method":"GET","url":"http://h/\#(n)","requestHeaders":{"Accept":"*/*"},"status":200,"timings":{"totalMs":\#(n % 97)},"outcome":"\#(outcome)"}"#
    }

    func read(_ text: String) throws -> (entries: [LogReader.Entry], warnings: [String]) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "log-\(UUID().uuidString).jsonl")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var warnings: [String] = []
        let entries = Array(LogReader(paths: [file.path]) { warnings.append($0) })
        return (entries, warnings.map { $0.replacingOccurrences(of: file.path, with: "F") })
    }

    @Test func truncatedLastLineIsSkippedWithOneWarning() throws {
        let whole = Self.line(1) + "\n" + Self.line(2) + "\n"
        let (entries, warnings) = try read(whole + String(Self.line(3).prefix(40)))
        #expect(entries.map(\.line.task) == ["t1", "t2"])
        #expect(warnings == ["F:3: the last line is incomplete (was the run killed?); skipped"])
    }

    @Test func garbageLineInTheMiddle() throws {
        let text = Self.line(1) + "\nnot json at all\n{\"no\":\"event\"}\n" + Self.line(2) + "\n"
        let (entries, warnings) = try read(text)
        #expect(entries.map(\.line.task) == ["t1", "t2"])
        #expect(entries.map(\.number) == [1, 4])
        #expect(
            warnings == [
                "F:2: not a courier log line; skipped", "F:3: not a courier log line; skipped",
            ])
    }

    /// A file that is no log (a records file read as one) is said in four lines, not one a
    /// line (trial EEE: 200,001 warnings for a 200,000-line file).
    @Test func aFileOfOtherLinesIsCounted() throws {
        let text = (1...1000).map { #"{"id":\#($0)}"# }.joined(separator: "\n") + "\n"
        let (entries, warnings) = try read(text + Self.line(1) + "\n")
        #expect(entries.map(\.line.task) == ["t1"])
        #expect(
            warnings == [
                "F:1: not a courier log line; skipped", "F:2: not a courier log line; skipped",
                "F:3: not a courier log line; skipped",
                "F: 997 more lines not courier log lines; skipped",
            ])
    }

    @Test func emptyFileAndMissingFile() throws {
        let (entries, warnings) = try read("")
        #expect(entries.isEmpty && warnings.isEmpty)
        var missing: [String] = []
        #expect(Array(LogReader(paths: ["/no/such.jsonl"]) { missing.append($0) }).isEmpty)
        #expect(missing == ["/no/such.jsonl: cannot read: No such file or directory"])
    }

    @Test func fieldsAreRead() throws {
        let (entries, _) = try read(Self.line(7, outcome: "failed") + "\n")
        let line = try #require(entries.first?.line)
        #expect(line.event == "request" && line.run == "r" && line.job == "j")
        #expect(line.status == 200 && line.outcome == "failed" && line.totalMs == 7)
        #expect(line.requestHeaders.map(\.name) == ["Accept"])
        #expect(line.time == 1_767_225_600.007)
    }

    @Test func manyLinesAreCountedOneByOne() async throws {
        // The reader's memory over half a million lines is measured on the built binary, in a
        // process of its own (CLITests/ReportMemoryTests); here, only that every line counts.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "many-\(UUID().uuidString).jsonl")
        try (0..<20_000).map { Self.line($0) + "\n" }.joined().write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var count = 0
        for entry in LogReader(paths: [file.path], warn: { _ in }) {
            count += entry.line.attempt ?? 0
        }
        #expect(count == 20_000)
    }

    @Test func escapesInSkippedStringsAreAcceptedExactlyAsTheStrictParserDoes() {
        // The scanner checks the escapes of strings it skips on their bytes; it must agree
        // with the strict parser both ways, or lines would be dropped or bad ones kept.
        let contents = [
            #"\"6b042207-49\""#, #"a\\b"#, #"\/"#, #"\b\f\n\r\t"#, #"\u0041"#, #"\u00e9x"#,
            #"\uD83D\uDE00"#, #"\ud83d\ude00"#, #"\x"#, #"\u12"#, #"\u12G4"#, #"\uD83D"#,
            #"\uDE00"#, #"\uD83Dx"#, #"\uD83D\u0041"#, #"\uD83D\uD83D"#, #"end\\"#, "",
        ]
        for content in contents {
            let line = Self.line(1).replacingOccurrences(
                of: #""status":"#, with: #""responseHeaders":{"ETag":"\#(content)"},"status":"#)
            let bytes = Array(line.utf8)
            let strict = (try? Courier.JSONParser.parse(bytes)) != nil
            #expect((LogLine(bytes: bytes[...]) != nil) == strict, "\(content): strict \(strict)")
        }
    }
}
