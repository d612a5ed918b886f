import Courier
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

    @Test func doublesHaveAtMostThreeDecimals() {
        let cases: [(Double, String)] = [
            (0, "0"), (1.5, "1.5"), (0.05, "0.05"), (0.005, "0.005"), (0.0004, "0"),
            (12.3456, "12.346"), (-0.25, "-0.25"), (-3, "-3"), (1000.1, "1000.1"),
            (123_456_789.5, "123456789.5"),
        ]
        for (value, expected) in cases {
            #expect(JSONWriter.string(.double(value)) == expected, "\(value)")
        }
    }

    @Test func timestampsAreRFC3339WithMilliseconds() {
        let date = Date(timeIntervalSince1970: 1_795_320_306.789)
        #expect(Timestamp.rfc3339(date) == "2026-11-22T04:05:06.789Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(
            Timestamp.rfc3339(Date(timeIntervalSince1970: 1_795_320_306.5))
                == "2026-11-22T04:05:06.500Z")
        var line = JSONLineBuilder()
        line.timestamp("ts", date)
        line.int("n", -42)
        line.milliseconds("ms", 0.0125)
        line.milliseconds("none", nil)
        #expect(
            String(decoding: line.finish(), as: UTF8.self)
                == #"{"ts":"2026-11-22T04:05:06.789Z","n":-42,"ms":12.5,"none":null}"#)
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
