import Courier
import Foundation
import Testing

/// JSON lines decoded chunk by chunk: blank lines, line endings, the last line, errors with
/// their line numbers, the length limit, and any cutting of the bytes.
@Suite struct JSONLinesDecoderTests {
    struct Item: Decodable, Equatable {
        let id: Int
        let name: String
    }

    static func items(_ bytes: [UInt8], cutAt offsets: [Int], maxLineLength: Int = 1 << 20)
        throws -> [Item]
    {
        var decoder = JSONLinesDecoder(of: Item.self, maxLineLength: maxLineLength)
        var items: [Item] = []
        var start = 0
        for end in offsets + [bytes.count] {
            items += try decoder.feed(bytes[start..<end])
            start = end
        }
        return items + (try decoder.finish())
    }

    static func items(_ text: String) throws -> [Item] {
        try items(Array(text.utf8), cutAt: [])
    }

    static let sample = Array(
        ("\u{FEFF}{\"id\": 1, \"name\": \"é\"}\r\n\n  \t\n{\"id\": 2, \"name\": \"𝄞\"}\r"
            + "{\"id\": 3, \"name\": \"a\\nb\"}\n{\"id\": 4, \"name\": \"last, unended\"}").utf8)
    static let sampleItems = [
        Item(id: 1, name: "é"), Item(id: 2, name: "𝄞"), Item(id: 3, name: "a\nb"),
        Item(id: 4, name: "last, unended"),
    ]

    @Test func everyCutGivesTheSameValues() throws {
        let count = Self.sample.count
        #expect(try Self.items(Self.sample, cutAt: []) == Self.sampleItems)
        for first in 0...count {
            for second in first...count {
                let items = try Self.items(Self.sample, cutAt: [first, second])
                guard items == Self.sampleItems else {
                    Issue.record("cut at \(first) and \(second): \(items)")
                    return
                }
            }
        }
        #expect(try Self.items(Self.sample, cutAt: Array(0...count)) == Self.sampleItems)
    }

    @Test func blankLinesAreSkipped() throws {
        #expect(try Self.items("\n\n{\"id\": 1, \"name\": \"a\"}\n\n\r\n").count == 1)
        #expect(try Self.items("").isEmpty)
    }

    @Test func jsonTextSequenceRecordSeparatorsAreDropped() throws {
        let items = try Self.items(
            "\u{1E}{\"id\": 1, \"name\": \"a\"}\n\u{1E}{\"id\": 2, \"name\": \"b\"}\n")
        #expect(items.map(\.id) == [1, 2])
    }

    @Test func aLineThatDoesNotDecodeNamesItsLineNumber() throws {
        #expect {
            _ = try Self.items("{\"id\": 1, \"name\": \"a\"}\n\n{\"id\": 2}\n")
        } throws: { error in
            let error = error as? StreamError
            return error?.kind == .decoding && error?.line == 3
                && error?.message.contains("\"name\"") == true
        }
        #expect {
            _ = try Self.items("{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, ")
        } throws: { ($0 as? StreamError)?.line == 2 }
    }

    @Test func aLineOverTheLimitThrows() throws {
        let line = Array("{\"id\": 1, \"name\": \"\(String(repeating: "x", count: 100))\"}\n".utf8)
        #expect(try Self.items(line, cutAt: [], maxLineLength: line.count - 1).count == 1)
        #expect {
            _ = try Self.items(line, cutAt: [10, 50], maxLineLength: 64)
        } throws: { ($0 as? StreamError)?.kind == .lineTooLong }
    }
}
