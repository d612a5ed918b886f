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

    /// Trial III: a file saved with a byte order mark sent it as part of its first value.
    @Test func aByteOrderMarkIsNoPartOfTheFirstValue() throws {
        #expect(
            try lines([0xEF, 0xBB, 0xBF] + Array("abc\n\u{FEFF}def\n".utf8)) == [
                "abc", "\u{FEFF}def",
            ])
    }

    @Test func linesSpanningReadChunks() throws {
        // 60 KB lines against 64 KiB reads: most lines cross a read boundary.
        let long = String(repeating: "x", count: 60_000)
        let text = (0..<5).map { "\(long)\($0)" }.joined(separator: "\r\n")
        let read = try lines(Array(text.utf8))
        #expect(read.count == 5)
        #expect(read.map(\.count) == Array(repeating: 60_001, count: 5))
        #expect(read.last?.hasSuffix("4") == true)
    }

    @Test func aLineTooLongToBeAValueIsNotHeldWhole() throws {
        let limit = LineReader.maximumValueBytes
        let text = "before\n" + String(repeating: "y", count: 3_000_000) + "\nafter\n" + "z"
        let read = try lines(Array(text.utf8))
        #expect(read.count == 4)
        #expect(read[0] == "before")
        #expect(read[1].utf8.count == limit + 1, "its head stands for it; validation refuses it")
        #expect(read[2] == "after" && read[3] == "z", "the lines after it are read as usual")
    }

    @Test func keepsUnicode() throws {
        #expect(try lines(Array("é\n😀\r\n".utf8)) == ["é", "😀"])
    }

    @Test func foreachValuesOfEachSource() throws {
        #expect(Array(IteratorSequence(ForeachValues(.list(["a", "b"])))) == ["a", "b"])
        #expect(Array(IteratorSequence(ForeachValues(.list([])))) == [])
        #expect(Array(IteratorSequence(ForeachValues(.range(-1, 2)))) == ["-1", "0", "1", "2"])
        #expect(Array(IteratorSequence(ForeachValues(.range(3, 2)))) == [])
        // The last value of Int is the end, not an overflow.
        #expect(
            Array(IteratorSequence(ForeachValues(.range(Int.max - 1, Int.max))))
                == [String(Int.max - 1), String(Int.max)])
        #expect(Array(IteratorSequence(ForeachValues(.capture("ids")))) == [])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "values-\(UUID().uuidString)")
        try Data("x\ny\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var values = ForeachValues(.lines(file))
        #expect(values.next() == "x" && values.next() == "y")
        #expect(values.next() == nil && values.next() == nil)
    }
}
