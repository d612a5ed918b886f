import Foundation
import Testing

@testable import CourierJobs

/// The hand-read RFC 3339 timestamps agree with `ISO8601DateFormatter` on every form both
/// read, and leave it what they do not read.
@Suite("RFC 3339 instants")
struct RFC3339InstantTests {
    static func formatter(fractional: Bool) -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            fractional ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter
    }

    @Test("the same instant as ISO8601DateFormatter, over 20,000 timestamps")
    func agreesWithTheFormatter() throws {
        var generator = SystemRandomNumberGenerator()
        let offsets = ["Z", "+00:00", "+02:00", "-05:30", "+14:00", "-12:00"]
        for round in 0..<20_000 {
            let year = Int.random(in: 1900...2200, using: &generator)
            let month = Int.random(in: 1...12, using: &generator)
            let day = Int.random(in: 1...28, using: &generator) + (round % 7 == 0 ? 3 : 0)
            let hour = Int.random(in: 0...23, using: &generator)
            let minute = Int.random(in: 0...59, using: &generator)
            let second = Int.random(in: 0...59, using: &generator)
            let millis = round % 3 == 0 ? "" : String(format: ".%03d", round % 1000)
            let text =
                String(
                    format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, hour, minute, second)
                + millis + offsets[round % offsets.count]
            let expected = Self.formatter(fractional: !millis.isEmpty).date(from: text)
            // What the cursor reads: the hand parser, or the formatter for what it leaves (a
            // 31 June, which the formatter takes as 1 July).
            let read = SinceRule.instant(text)
            #expect((read == nil) == (expected == nil), "\(text)")
            if let read, let expected {
                #expect(
                    abs(read.date.timeIntervalSince1970 - expected.timeIntervalSince1970)
                        < 0.000_5,
                    "\(text): \(read.date) against \(expected)")
                #expect(read.fractional == !millis.isEmpty)
            }
            if day <= 28 { #expect(RFC3339Instant.parse(text) != nil, "\(text)") }
        }
    }

    @Test("not the common form: nil, for the formatter to read")
    func otherForms() {
        for text in [
            "2026-01-05 06:00:00Z", "2026-01-05T06:00:00", "2026-02-30T00:00:00Z",
            "2026-01-05T24:00:00Z", "2026-01-05T06:00:00.Z", "2026-01-05T06:00:00+0200",
            "2026-01-05T06:00:00Zjunk", "2026-1-05T06:00:00Z", "2026-01-05T06:00:60Z",
        ] {
            #expect(RFC3339Instant.parse(text) == nil, "\(text)")
        }
    }

    @Test("a cursor's comparison by instant, offsets and fractions included")
    func comparisons() {
        #expect(SinceRule.isLater("2026-01-05T06:00:00.250Z", than: "2026-01-05T06:00:00Z"))
        #expect(SinceRule.isLater("2026-01-05T06:00:00Z", than: "2026-01-05T07:00:00+02:00"))
        #expect(!SinceRule.isLater("2026-01-05T06:00:00Z", than: "2026-01-05T08:00:00+02:00"))
        #expect(
            SinceRule.isLater("2026-01-05T06:00:00.000002Z", than: "2026-01-05T06:00:00.000001Z"))
    }
}
