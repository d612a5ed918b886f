import Courier
import Foundation

/// A task's `records`: the items of each response written as JSON lines into a file under
/// `outputDir`, by a disposition (`docs/job-file.md`, "records").
///
/// ```json
/// "records": {"from": "/items/*", "to": "records/users.jsonl", "write": "merge",
///             "key": "/id", "deleted": "/deleted"}
/// ```
struct RecordsRule: Sendable, Equatable {
    /// How a run's records meet the file's.
    enum Write: String, Sendable, CaseIterable {
        /// After the file's lines.
        case append
        /// In place of the file's lines.
        case replace
        /// By `key`: a later record replaces an earlier one of the same key; a tombstone
        /// (`deleted`) removes it. The file is kept sorted by key.
        case merge
    }

    /// A JSON Pointer to the records of each response; `*` takes every array element.
    var from: String
    /// The file under `outputDir`, a template (`{variables}` and captures).
    var to: String
    var write: Write
    /// `merge` only: the pointer, inside each record, to its primary key.
    var key: String?
    /// `merge` only: the pointer, inside each record, to its tombstone field.
    var deleted: String?
    /// `where`, `select`, `drop`, `rename` and `add`: how each record is shaped.
    var shaping = RecordShaping()
    /// `csv`: the columns of the CSV kept beside the file (``RecordsCSV``); `nil` for none.
    var csv: [String]?

    /// What the lines of a task's part depend on: a part written under other settings (the
    /// job changed since) is not used.
    var settings: String {
        [write.rawValue, key ?? "", deleted ?? "", shaping.text].joined(separator: " ")
    }

    /// Why `path` (rendered) may not be a records file, or `nil`: the rules of `save`
    /// (``OutputPath``: inside `outputDir`, and not inside `.courier`, which is courier's own).
    static func problem(with path: String) -> String? {
        OutputPath.problem(with: path)
    }

    /// `path` with empty and `.` components dropped (`records//./a.jsonl` is
    /// `records/a.jsonl`): the one name of a file, which tasks sharing it agree on.
    static func canonical(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
            .joined(separator: "/")
    }

    /// The tasks whose `to` has no `{variables}` and names one file must agree on how it is
    /// written; tasks whose file depends on values are checked as they run.
    static func checkShared(_ tasks: [TaskSpec], context: DecodingContext) {
        var first: [String: TaskSpec] = [:]
        for spec in tasks {
            guard let rule = spec.records, Template(rule.to).variables.isEmpty else { continue }
            let path = canonical(Template(rule.to).render([:]))
            guard let earlier = first[path] else {
                first[path] = spec
                continue
            }
            if let other = earlier.records, other.settings != rule.settings || other.csv != rule.csv
            {
                context.error(
                    "\(spec.path).records",
                    "writes \(path) as \(earlier.path) does, with other settings (\(rule.describedSettings), there \(other.describedSettings)); tasks sharing a records file must agree on write, key, deleted, how records are shaped and csv",
                    at: nil)
            }
        }
    }

    /// The settings, in words, for messages.
    var describedSettings: String {
        var text = "write \(write.rawValue)"
        if let key { text += ", key \(key)" }
        if let deleted { text += ", deleted \(deleted)" }
        if !shaping.isEmpty { text += ", \(shaping.text)" }
        if let csv { text += ", csv " + csv.joined(separator: ",") }
        return text
    }
}

/// Where one expanded task writes its records: the rule, and the file (rendered, canonical,
/// relative to `outputDir`).
struct RecordsTarget: Sendable {
    var rule: RecordsRule
    var path: String
    /// The `add` members, rendered for this task.
    var added: [(name: String, node: JSONNode)] = []
}
