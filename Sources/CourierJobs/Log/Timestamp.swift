import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
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
        put(Int(parts.tm_year) + 1900, digits: 4, then: UInt8(ascii: "-"))
        put(Int(parts.tm_mon) + 1, digits: 2, then: UInt8(ascii: "-"))
        put(Int(parts.tm_mday), digits: 2, then: UInt8(ascii: "T"))
        put(Int(parts.tm_hour), digits: 2, then: UInt8(ascii: ":"))
        put(Int(parts.tm_min), digits: 2, then: UInt8(ascii: ":"))
        put(Int(parts.tm_sec), digits: 2, then: UInt8(ascii: "."))
        put(milliseconds % 1000, digits: 3, then: UInt8(ascii: "Z"))
    }

    /// A file-name-safe form with milliseconds, `20261122T040506.789Z`, so that the names of
    /// one job's logs sort in the order the runs started.
    static func compact(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02d.%03dZ", Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min),
            Int(parts.tm_sec), milliseconds % 1000)
    }
}
