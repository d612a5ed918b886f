import Courier
import Foundation

/// `since`: a cursor kept between runs (`max` or `header`, `start`, `lookback`).
extension TaskDecoder {
    /// Reads `since`, and makes `{since}` one of the task's variables.
    mutating func readSince() -> SinceRule? {
        guard let sinceNode = reader.take("since") else { return nil }
        // `{since}` is the task's whether or not the rest is right: a wrong `since` also read
        // "uses {since}, but the task has no foreach variable" (trial V).
        defer { variables.insert("since") }
        guard
            var since = NodeReader(
                sinceNode, path: "\(path).since", keys: JobKeys.since, context: context)
        else { return nil }
        defer { since.rejectUnknownKeys() }
        if variables.contains("since") {
            context.error(
                "\(path).since",
                "the task has a foreach variable named \"since\", which {since} would be both",
                at: sinceNode)
        }
        let maxNode = since.take("max")
        let max = since.string("max")
        let header = since.string("header")
        let start = since.string("start", required: true)
        let lookback =
            since.number("lookback", range: 0...31_622_400, what: "seconds from 0 to a year")
            ?? 0
        let source: SinceRule.Source
        switch (max, header) {
        case (let pointer?, nil):
            guard
                let checked = Self.pointer(
                    pointer, at: "\(path).since.max", maxNode ?? sinceNode, context: context)
            else { return nil }
            source = .max(checked)
        case (nil, let name?):
            guard WireRequest.isToken(name) else {
                since.fail(
                    "header",
                    "expected a header field name such as \"X-Sync-Token\", found \(NodeReader.describe(sinceNode))",
                    at: sinceNode
                )
                return nil
            }
            source = .header(name)
        default:
            context.error(
                "\(path).since",
                "needs one of \"max\" (a JSON Pointer to the values, like \"/items/*/updated_at\") and \"header\" (a response header field)",
                at: sinceNode)
            return nil
        }
        guard let start else { return nil }
        return SinceRule(source: source, start: start, lookback: lookback)
    }

    /// Refuses `{since}` in the task's id (the cursor is kept under the id), and a cursor on
    /// a task that `keeps` nothing (no `save`, `records` or `capture`): its cursor would move
    /// past changes no file or task ever had (trial V: a sync lost them for good).
    func checkSince(_ rule: SinceRule?, id: String, keeps: Bool) {
        guard rule != nil else { return }
        if Template(id).variables.contains("since") {
            context.error(
                "\(path).id", "cannot use {since}: the task's cursor is kept under its id",
                at: node)
        }
        if !keeps {
            context.error(
                "\(path).since",
                "the task keeps nothing it fetches (no \"save\", \"records\" or \"capture\"): its cursor would move past changes nothing kept; give it one of them",
                at: node)
        }
    }
}
