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
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, at offset: Int, digits: Int) {
            var rest = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, at: 0, digits: 4)
        put(Int(parts.tm_mon) + 1, at: 5, digits: 2)
        put(Int(parts.tm_mday), at: 8, digits: 2)
        put(Int(parts.tm_hour), at: 11, digits: 2)
        put(Int(parts.tm_min), at: 14, digits: 2)
        put(Int(parts.tm_sec), at: 17, digits: 2)
        put(milliseconds % 1000, at: 20, digits: 3)
        for (index, separator) in [
            (4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z"),
        ] {
            bytes[index] = UInt8(ascii: Unicode.Scalar(separator)!)
        }
        return String(decoding: bytes, as: UTF8.self)
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
