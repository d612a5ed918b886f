import Foundation

/// An RFC 3339 timestamp (`2026-01-05T06:00:00Z`, `…T06:00:00.250+02:00`) read by hand: a
/// `since` cursor compares each record's timestamp with the largest so far, and an
/// `ISO8601DateFormatter` made and asked twice per record cost 0.7 ms of CPU a record (trial
/// HH2: a 60,000-row sync spent 44 s of CPU in it). The common form only: whatever else
/// `ISO8601DateFormatter` takes is left to it (``SinceRule/instant(_:)``).
enum RFC3339Instant {
    /// The instant of `text`, in seconds since 1970, and whether it had fractional seconds;
    /// `nil` when `text` is not `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with real calendar
    /// values.
    static func parse(_ text: String) -> (seconds: Double, fractional: Bool)? {
        var reader = Reader(bytes: Array(text.utf8))
        guard let year = reader.digits(4), reader.skip("-"), let month = reader.digits(2),
            reader.skip("-"), let day = reader.digits(2), reader.skip("T"),
            let hour = reader.digits(2), reader.skip(":"), let minute = reader.digits(2),
            reader.skip(":"), let second = reader.digits(2),
            (1...12).contains(month), day >= 1, day <= daysIn(month, of: year), hour < 24,
            minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        var fractional = false
        if reader.skip(".") {
            var scale = 0.1
            var count = 0
            while let digit = reader.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
            fractional = true
        }
        var offset = 0
        if reader.skip("Z") {
        } else if let sign = reader.sign(), let hours = reader.digits(2), reader.skip(":"),
            let minutes = reader.digits(2), hours < 24, minutes < 60
        {
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard reader.atEnd else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return (Double(seconds) + fraction, fractional)
    }

    /// Days from 1970-01-01 to the date (proleptic Gregorian; the inverse of ``UTCTime``'s).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let marchMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else {
                return false
            }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 else {
                return nil
            }
            defer { index += 1 }
            return Int(bytes[index] - 0x30)
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
