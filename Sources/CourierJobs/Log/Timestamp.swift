import Foundation

/// RFC 3339 UTC timestamps with milliseconds (`2026-11-22T04:05:06.789Z`), as the log uses.
enum Timestamp {
    /// Written digit by digit: one per log line, and `String(format:)` showed in profiles.
    static func rfc3339(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendRFC3339(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``rfc3339(_:)``'s 24 bytes appended to `output` (a log line being built).
    static func appendRFC3339(_ date: Date, to output: inout [UInt8]) {
        let (time, milliseconds) = split(date)
        func put(_ value: Int, digits: Int, then separator: UInt8) {
            // Room first, then the digits from the last (reversing a slice copied the line).
            let start = output.count
            for _ in 0..<digits { output.append(UInt8(ascii: "0")) }
            var rest = value
            var index = start + digits - 1
            while index >= start {
                output[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                index -= 1
            }
            output.append(separator)
        }
        put(time.year, digits: 4, then: UInt8(ascii: "-"))
        put(time.month, digits: 2, then: UInt8(ascii: "-"))
        put(time.day, digits: 2, then: UInt8(ascii: "T"))
        put(time.hour, digits: 2, then: UInt8(ascii: ":"))
        put(time.minute, digits: 2, then: UInt8(ascii: ":"))
        put(time.second, digits: 2, then: UInt8(ascii: "."))
        put(milliseconds, digits: 3, then: UInt8(ascii: "Z"))
    }

    /// The date's calendar time and its milliseconds (0–999), both rounded down.
    private static func split(_ date: Date) -> (UTCTime, milliseconds: Int) {
        let total = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = total / 1000
        var milliseconds = total % 1000
        if milliseconds < 0 {
            seconds -= 1
            milliseconds += 1000
        }
        return (UTCTime(secondsSince1970: seconds), milliseconds)
    }

    /// A file-name-safe form with milliseconds, `20261122T040506.789Z`, so that the names of
    /// one job's logs sort in the order the runs started.
    static func compact(_ date: Date) -> String {
        let (time, milliseconds) = split(date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02d.%03dZ", time.year, time.month, time.day, time.hour,
            time.minute, time.second, milliseconds)
    }
}
