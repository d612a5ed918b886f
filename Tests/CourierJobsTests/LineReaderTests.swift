import Foundation
import Testing

@testable import CourierJobs

/// `lines` files: CRLF, no final newline, blank lines, and lines across read chunks.
@Suite("LineReader")
struct LineReaderTests {
    func lines(_ bytes: [UInt8]) throws -> [String] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lines-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return Array(LineReader(url: file))
    }

    @Test func crlfBlankLinesAndNoFinalNewline() throws {
        #expect(try lines(Array("a\r\n\r\n  b \r\n\n\tc".utf8)) == ["a", "b", "c"])
        #expect(try lines(Array("only".utf8)) == ["only"])
        #expect(try lines([]) == [])
        #expect(try lines(Array("\n\r\n \n".utf8)) == [])
    }

    @Test func linesSpanningReadChunks() throws {
        let long = String(repeating: "x", count: 200_000)
        let text = (0..<3).map { "\(long)\($0)" }.joined(separator: "\r\n")
        let read = try lines(Array(text.utf8))
        #expect(read.count == 3)
        #expect(read.map(\.count) == [200_001, 200_001, 200_001])
        #expect(read.last?.hasSuffix("2") == true)
    }

    @Test func keepsUnicode() throws {
        #expect(try lines(Array("é\n😀\r\n".utf8)) == ["é", "😀"])
    }
}
