/// Durations as people write them, in one place for the command line (`--deadline 30m`,
/// `report --since 7d`) and the job file (`window.step`, `lag`), and as messages write them.
enum DurationText {
    /// The seconds `text` names: numbers each followed by `d`, `h`, `m` or `s` (`ms` for
    /// milliseconds), or one bare number of seconds; `nil` for anything else.
    static func seconds(_ text: String) -> Double? {
        if let bare = Double(text), bare.isFinite { return bare }
        var total = 0.0
        var rest = Substring(text)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            guard let value = Double(number) else { return nil }
            switch unit {
            case "d": total += value * 86_400
            case "h": total += value * 3600
            case "m": total += value * 60
            case "s": total += value
            case "ms": total += value / 1000
            default: return nil
            }
        }
        return total
    }

    /// A setting as given (`--grace 0.5` is `0.5s`, not `1s`): ``short(_:)`` for whole
    /// seconds, else the seconds to the millisecond.
    static func exact(_ seconds: Double) -> String {
        guard seconds.rounded() != seconds else { return short(seconds) }
        let milliseconds = (seconds * 1000).rounded() / 1000
        return "\(milliseconds)s"
    }

    /// `45s`, `2m30s`, `1h30m`, `5d8h`: the two largest units, rounded to the second.
    static func short(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 86_400 { return "\(whole / 86_400)d\(whole % 86_400 / 3600)h" }
        if whole >= 3600 { return "\(whole / 3600)h\(whole % 3600 / 60)m" }
        return whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
