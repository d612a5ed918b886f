import Foundation
import Testing

@testable import Courier

/// The hand-written JSON parser: what RFC 8259 allows, what it does not, and the source text of
/// numbers kept byte for byte.
@Suite("JSONParser")
struct JSONParserTests {
    func string(_ json: String) throws -> String? {
        guard case .string(let text) = try JSONParser.parse(json).value else { return nil }
        return text
    }

    @Test func escapesAndSurrogatePairs() throws {
        #expect(try string(#""a\"b\\c\/d\b\f\n\r\t""#) == "a\"b\\c/d\u{8}\u{C}\n\r\t")
        #expect(try string(#""\u00e9\u4E2D""#) == "é中")
        #expect(try string(#""\ud83d\ude00""#) == "😀", "a surrogate pair is one scalar")
        #expect(try string("\"😀 raw\"") == "😀 raw")
    }

    @Test(arguments: [#""\ud83d""#, #""\ude00""#, #""\ud83d\u0041""#, #""\u12""#, #""\x""#])
    func loneSurrogatesAndBadEscapesAreErrors(json: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(json) }
    }

    @Test(arguments: [
        "9223372036854775808", "18446744073709551616", "1e400", "-0", "52.520008", "0.0001",
        "1E-7", "123456789012345678901234567890.5e-3",
    ])
    func numbersKeepTheirSourceText(text: String) throws {
        let node = try JSONParser.parse("[\(text)]")
        guard case .array(let elements) = node.value else {
            Issue.record("not an array")
            return
        }
        #expect(elements.first?.numberSource == text)
    }

    @Test(arguments: ["01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN", "Infinity"])
    func invalidNumbers(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func depthIsBounded() throws {
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        _ = try JSONParser.parse(fine)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
    }

    @Test func positionsAndDuplicates() throws {
        do {
            _ = try JSONParser.parse("{\n  \"a\": 1,\n  \"a\": 2\n}")
            Issue.record("a duplicate key was accepted")
        } catch {
            #expect(error.line == 3)
        }
        do {
            _ = try JSONParser.parse("{\"a\": [1, 2,]}")
            Issue.record("a trailing comma was accepted")
        } catch {
            #expect(error.line == 1 && error.column > 10)
        }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("\"tab\tinside\"") }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("1 2") }
    }
}
