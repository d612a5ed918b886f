import Foundation
import Testing

@testable import CourierJobs

/// The log's JSON writer: valid JSON for every string, numbers that read back, raw text as is.
@Suite("JSONWriter")
struct JSONWriterTests {
    @Test func stringsAreEscapedAndReadBack() throws {
        let awkward = "q\"b\\s/n\nr\rt\t\u{0}\u{1F}\u{7F}é😀\u{2028}"
        let text = JSONWriter.string(.object([("s", .string(awkward))]))
        let decoded = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
        #expect(decoded?["s"] == awkward)
        #expect(!text.contains("\n") && !text.contains("\r"), "one line")
    }

    @Test func shapesAndNumbers() {
        #expect(
            JSONWriter.string(
                .object([
                    ("a", .array([.int(1), .null, .bool(true), .bool(false)])),
                    ("b", .object([])), ("c", .raw("52.520008")), ("d", .int(Int.min)),
                ])) == #"{"a":[1,null,true,false],"b":{},"c":52.520008,"d":-9223372036854775808}"#)
    }

    @Test func doublesStayValidJSON() throws {
        for value in [0.0, 1.5, 1234.5678, 1e-9, 1e300, .nan, .infinity, -.infinity] {
            let text = JSONWriter.string(.array([.double(value)]))
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil,
                "\(value) wrote \(text)")
        }
    }
}
