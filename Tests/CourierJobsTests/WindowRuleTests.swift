@testable import CourierJobs
import Foundation
import Testing

/// A window task's windows: counted before any is made, each bound a whole number of steps
/// from the start, written as the date formatter writes it.
@Suite("window rule")
struct WindowRuleTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    @Test("bounds are written as ISO 8601 writes them, in every format")
    func writtenAsTheFormatterWrites() {
        let rfc3339 = ISO8601DateFormatter()
        rfc3339.formatOptions = [.withInternetDateTime]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        var rule = WindowRule(start: Self.start, step: 3600)
        // Leap days, ends of months and years, 1970 itself, a far year; fractions go down.
        let seconds: [Double] = [
            0, 1.999, 951_782_400, 951_868_799.5, 1_709_164_800, 1_767_225_599, 4_102_444_800,
            253_402_300_799,
        ]
        for second in seconds {
            let date = Date(timeIntervalSince1970: second)
            rule.format = .rfc3339
            #expect(rule.written(date) == rfc3339.string(from: date), "\(second)")
            rule.format = .date
            #expect(rule.written(date) == day.string(from: date), "\(second)")
        }
        rule.format = .epochMs
        #expect(rule.written(Date(timeIntervalSince1970: 1.5)) == "1500")
    }

    @Test("whole windows only, counted without making them; the count agrees with the list")
    func countedAndMade() {
        let now = Self.start.addingTimeInterval(10 * 86_400 + 30)
        var rule = WindowRule(start: Self.start, step: 86_400)
        #expect(rule.count(now: now) == 10)
        let windows = rule.windows(now: now)
        #expect(windows.count == 10)
        #expect(windows.first?.start == "2026-01-01T00:00:00Z")
        #expect(windows.last?.end == "2026-01-11T00:00:00Z")
        // Each window starts where the one before ended: no gap, no overlap.
        #expect(zip(windows, windows.dropFirst()).allSatisfy { $0.end == $1.start })
        // A step that is no whole number of milliseconds does not drift over many windows.
        rule.step = 0.1
        rule.end = Self.start.addingTimeInterval(10_000)
        rule.format = .epochMs
        #expect(rule.count(now: now) == 100_000)
        #expect(rule.windows(now: now).last?.end == "1767235600000")
        // A billion windows are counted, not made.
        rule.step = 1
        rule.start = Date(timeIntervalSince1970: 0)
        #expect(rule.count(now: now) == 1_767_235_600)
    }
}
