/// Calendar arithmetic without Foundation's `Calendar`, for parsers on hot paths (cookie
/// dates, log timestamps).
package enum CivilDays {
    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
    package static func from(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
