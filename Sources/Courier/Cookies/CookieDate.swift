import Foundation

/// The lenient cookie-date parser of RFC 6265 section 5.1.1: finds a time, a day of month, a
/// month name and a year among the tokens, in any order, as browsers do.
enum CookieDate {
    private static let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(text) {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let value = leadingDigits(token, 1...2) {
                day = value
            } else if month == nil, token.count >= 3,
                let index = months.firstIndex(of: String(token.prefix(3)).lowercased())
            {
                month = index + 1
            } else if year == nil, let value = leadingDigits(token, 2...4) {
                year = value
            }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) {
            year += 1900
        } else if (0...69).contains(year) {
            year += 2000
        }
        guard (1...daysIn(month: month, year: year)).contains(day), year >= 1601, hour <= 23,
            minute <= 59, second <= 59
        else { return nil }
        let days = CivilDays.from(year: year, month: month, day: day)
        return Date(
            timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Splits on the RFC's delimiters: everything but digits, letters and `:`.
    private static func tokens(_ text: String) -> [Substring] {
        text.split { character in
            !(character.isASCII && (character.isLetter || character.isNumber || character == ":"))
        }
    }

    /// A number of `digits` digits at the start of the token, followed by non-digits only.
    private static func leadingDigits(_ token: Substring, _ digits: ClosedRange<Int>) -> Int? {
        let number = token.prefix { $0.isASCII && $0.isNumber }
        guard digits.contains(number.count),
            !token.dropFirst(number.count).contains(where: \.isNumber)
        else { return nil }
        return Int(number)
    }

    private static func parseTime(_ token: Substring) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let numbers = parts.enumerated().map { index, part -> Int? in
            let digits = index == 2 ? part.prefix { $0.isNumber } : part
            guard (1...2).contains(digits.count) else { return nil }
            return Int(digits)
        }
        guard let hour = numbers[0], let minute = numbers[1], let second = numbers[2] else {
            return nil
        }
        return (hour, minute, second)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
