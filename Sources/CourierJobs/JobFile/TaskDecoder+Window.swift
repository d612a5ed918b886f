import Courier
import Foundation

/// `window`: the time windows a task walks (``WindowRule``), as two zipped `foreach`
/// variables, `{windowStart}` and `{windowEnd}`, the windows its cursor file holds as done
/// left out.
extension TaskDecoder {
    static let windowFormats = WindowRule.Format.allCases.map { "\"\($0.rawValue)\"" }.joined(
        separator: ", ")

    /// Reads `window`, and makes its bounds the task's variables.
    mutating func readWindow(foreach: [(name: String, source: ForeachSource)]) -> WindowRule? {
        guard let node = reader.take("window") else { return nil }
        let path = "\(self.path).window"
        guard var inner = NodeReader(node, path: path, keys: JobKeys.window, context: context)
        else { return nil }
        defer { inner.rejectUnknownKeys() }
        if !foreach.isEmpty {
            context.error(
                path, "walks windows of its own: leave foreach out of this task", at: node)
        }
        if case .object(let members) = reader.node.value,
            members.contains(where: { $0.key == "since" })
        {
            context.error(
                path, "keeps its own cursor (each window's end): leave since out of this task",
                at: node)
        }
        variables.formUnion([WindowRule.startVariable, WindowRule.endVariable])
        let start = instant(
            &inner, "start", path: path, node: node, required: true,
            expected:
                "a time such as \"2026-01-01T00:00:00Z\", \"2026-01-01\" or seconds since 1970")
        let step = duration(&inner, "step", path: path, required: true)
        let end = instant(
            &inner, "end", path: path, node: node, required: false,
            expected: "a time such as \"2026-02-01\"", hint: " (leave it out for now)")
        let lag = duration(&inner, "lag", path: path, required: false) ?? 0
        let format = inner.choice("format", of: WindowRule.Format.self) ?? .rfc3339
        guard let start, let step else { return nil }
        if let end, end <= start {
            context.error("\(path).end", "is not after start: no window fits", at: node)
        }
        // A date names a whole UTC day: windows that start mid-day or last part of one would
        // be sent as the same dates.
        if format == .date,
            start.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) != 0
                || step.truncatingRemainder(dividingBy: 86_400) != 0
        {
            context.error(
                "\(path).format",
                "\"date\" writes whole days: start must be a UTC midnight and step whole days (\"1d\", \"7d\"); use \"rfc3339\" for other windows",
                at: node)
        }
        if context.windowOverride != nil, let write = records(in: node), write == "append" {
            context.error(
                "\(path)",
                "--window fetches windows again, and \"append\" would add their records twice: backfill a task whose records merge",
                at: node)
        }
        return WindowRule(start: start, step: step, end: end, lag: lag, format: format)
    }

    /// The instant at `key` of `window` (``WindowRule/instant(_:)``), or `nil` (and an error
    /// naming what was `expected` and what was found, when there is a value).
    private func instant(
        _ inner: inout NodeReader, _ key: String, path: String, node: JSONNode, required: Bool,
        expected: String, hint: String = ""
    ) -> Date? {
        // Errors point at the value (trial V: at the task, lines away).
        let at = inner.take(key) ?? node
        // Seconds since 1970 may be written as a number too, as the docs say them.
        if case .number(let seconds) = at.value {
            guard seconds == seconds.rounded(), abs(seconds) < 1e11 else {
                // Milliseconds by mistake, or a fraction: said as such, not "a string".
                context.error(
                    "\(path).\(key)",
                    "expected \(expected) (whole seconds, up to 10 digits), found \(NodeReader.describe(at))",
                    at: at)
                return nil
            }
            return Date(timeIntervalSince1970: seconds)
        }
        return inner.string(key, required: required).flatMap { text -> Date? in
            guard let date = WindowRule.instant(text) else {
                context.error(
                    "\(path).\(key)", "expected \(expected), found \"\(text)\"\(hint)", at: at)
                return nil
            }
            return date
        }
    }

    /// The `write` of the task's `records`, read ahead of its turn.
    private func records(in node: JSONNode) -> String? {
        guard case .object(let members) = self.node.value,
            case .object(let records)? = members.first(where: { $0.key == "records" })?.node.value,
            case .string(let write)? = records.first(where: { $0.key == "write" })?.node.value
        else { return nil }
        return write
    }

    private func duration(_ reader: inout NodeReader, _ key: String, path: String, required: Bool)
        -> TimeInterval?
    {
        let at = reader.take(key) ?? node
        guard let text = reader.string(key, required: required) else { return nil }
        guard let seconds = WindowRule.duration(text), seconds >= 1 else {
            context.error(
                "\(path).\(key)",
                "expected a length of a second or more, such as \"15m\", \"6h\", \"1d\" or \"1h30m\", found \"\(text)\"",
                at: at)
            return nil
        }
        return seconds
    }

    /// The task's windows as zipped variables: every whole window to the end, less those
    /// whose task the cursor file holds as done (a backfill's range takes them all).
    func windowVariables(_ rule: WindowRule, id: String) -> (
        [(name: String, source: ForeachSource)], Bool
    ) {
        var rule = rule
        var done: [String: String] = [:]
        if let range = context.windowOverride {
            // On the job's own grid, and never past now (less the lag): a window not over yet
            // would be kept as done.
            let first = (range.start.timeIntervalSince(rule.start) / rule.step).rounded(.down)
            let last = (range.end.timeIntervalSince(rule.start) / rule.step).rounded(.up)
            let latest = context.now.addingTimeInterval(-rule.lag)
            rule.end = min(rule.start.addingTimeInterval(last * rule.step), latest)
            rule.start = rule.start.addingTimeInterval(first * rule.step)
        } else {
            done = context.keptCursors(outputDir: defaults.outputDir)
        }
        let count = rule.count(now: context.now)
        guard count <= WindowRule.limit else {
            // Refused at once: the windows were made one by one up to a million, and the
            // rest left out without a word (trial V).
            context.error(
                "\(path).window",
                "\(count) windows from \(rule.written(rule.start)) at \(DurationText.short(rule.step)) a window, more than \(WindowRule.limit): give a later start or a longer step, or backfill in parts (--window START..END)",
                at: node)
            return ([], true)
        }
        let template = Template(id)
        let windows = rule.windows(now: context.now).filter { window in
            done.isEmpty
                || done[
                    template.render([
                        WindowRule.startVariable: window.start, WindowRule.endVariable: window.end,
                    ])] == nil
        }
        return (
            [
                (WindowRule.startVariable, .list(windows.map(\.start))),
                (WindowRule.endVariable, .list(windows.map(\.end))),
            ], true
        )
    }
}
