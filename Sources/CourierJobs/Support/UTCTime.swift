/// The UTC calendar date and time of a count of seconds since 1970 (proleptic Gregorian).
///
/// Worked out here rather than with `gmtime_r`: glibc takes its timezone lock on every call,
/// and with a timestamp on every log line the runner's threads queued for that lock.
struct UTCTime: Equatable {
    var year: Int
    /// 1–12.
    var month: Int
    /// 1–31.
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    init(secondsSince1970 seconds: Int) {
        let secondsPerDay = 86_400
        // Floor division, so that instants before 1970 fall on the day before, not after.
        var days = seconds / secondsPerDay
        var time = seconds % secondsPerDay
        if time < 0 {
            days -= 1
            time += secondsPerDay
        }
        hour = time / 3600
        minute = time % 3600 / 60
        second = time % 60

        // The calendar repeats every 400 years (146,097 days). Counting from 1 March 0000 puts
        // the leap day at the end of each year, so month lengths follow a fixed pattern.
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra =
            (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        // Months from March, of 31, 30, 31, 30, 31 days in turn (153 days every five).
        let marchMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }
}
