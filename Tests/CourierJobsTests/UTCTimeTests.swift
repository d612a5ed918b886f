import Foundation
import Testing

@testable import CourierJobs

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("UTC calendar time")
struct UTCTimeTests {
    /// The C library's answer, as the oracle.
    private func gmtime(_ seconds: Int) -> UTCTime {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        return UTCTime(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    @Test func everyDayFrom1600To2400AgreesWithTheCLibrary() {
        // Each midnight and the second before it: month ends, leap days (2000 is one, 1900
        // and 2100 are not) and year ends are all among them.
        let first = -11_676_096_000  // 1600-01-01T00:00:00Z
        let last = 13_569_465_600  // 2400-01-01T00:00:00Z
        var mismatches: [Int] = []
        for midnight in stride(from: first, through: last, by: 86_400) {
            for seconds in [midnight - 1, midnight, midnight + 45_296] {
                if UTCTime(secondsSince1970: seconds) != gmtime(seconds) {
                    mismatches.append(seconds)
                }
            }
            if mismatches.count > 5 { break }
        }
        #expect(mismatches.isEmpty, "first mismatches at \(mismatches)")
    }

    @Test func spreadSecondsAgreeWithTheCLibrary() {
        var generator = SystemRandomNumberGenerator()
        var mismatches: [Int] = []
        for _ in 0..<100_000 where mismatches.count < 5 {
            let seconds = Int.random(in: -5_000_000_000...10_000_000_000, using: &generator)
            if UTCTime(secondsSince1970: seconds) != gmtime(seconds) { mismatches.append(seconds) }
        }
        #expect(mismatches.isEmpty, "first mismatches at \(mismatches)")
    }

    @Test func timestampsBefore1970RoundDown() {
        // 1969-12-31T23:59:59.750Z: the second and the milliseconds are both floors.
        #expect(
            Timestamp.rfc3339(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
        #expect(Timestamp.compact(Date(timeIntervalSince1970: -0.25)) == "19691231T235959.750Z")
        #expect(
            Timestamp.compact(Date(timeIntervalSince1970: 1_795_320_306.789))
                == "20261122T040506.789Z")
    }
}
