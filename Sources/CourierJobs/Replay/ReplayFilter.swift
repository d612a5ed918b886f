import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which logged tasks `courier replay` sends: by default those whose final outcome is not ok;
/// `--status` and `--error-kind` narrow that to any of the given statuses or kinds, `--task` to
/// ids matching a glob.
struct ReplayFilter: Sendable {
    /// Exact statuses and classes (`5` for `5xx`).
    var statuses: Set<Int> = []
    var statusClasses: Set<Int> = []
    var errorKinds: Set<String> = []
    var taskGlob: String?
    /// `--all`: every task, ok ones included.
    var all = false

    /// The options that give this filter, as a command line names them: a repair that
    /// replays the same logs must choose the same tasks (trial OO: it chose every failure).
    var arguments: [String] {
        var words: [String] = []
        let statuses =
            statusClasses.sorted().map { "\($0)xx" } + self.statuses.sorted().map(String.init)
        if !statuses.isEmpty { words += ["--status", statuses.joined(separator: ",")] }
        if !errorKinds.isEmpty {
            words += ["--error-kind", errorKinds.sorted().joined(separator: ",")]
        }
        if let taskGlob { words += ["--task", taskGlob] }
        if all { words.append("--all") }
        return words
    }

    /// Parses `5xx,429`.
    static func statuses(_ text: String) throws(UsageError) -> (Set<Int>, Set<Int>) {
        var exact: Set<Int> = []
        var classes: Set<Int> = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if part.count == 3, part.lowercased().hasSuffix("xx"), let digit = Int(part.prefix(1)),
                (1...5).contains(digit)
            {
                classes.insert(digit)
            } else if let status = Int(part), (100...599).contains(status) {
                exact.insert(status)
            } else {
                throw UsageError(
                    "replay: --status expects statuses or classes like 5xx,429, got '\(part)'")
            }
        }
        return (exact, classes)
    }

    /// Parses `timeout,connect`: each one of the kinds a log line may carry
    /// (``LogErrorKind/known``).
    static func errorKinds(_ text: String) throws(UsageError) -> Set<String> {
        var kinds: Set<String> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false).map({
            $0.trimmingCharacters(in: .whitespaces)
        }) {
            guard LogErrorKind.known.contains(part) else {
                throw UsageError(
                    "replay: --error-kind expects kinds a log line carries (\(LogErrorKind.known.joined(separator: ", "))), got '\(part)'"
                )
            }
            kinds.insert(part)
        }
        return kinds
    }

    func matches(_ line: LogLine) -> Bool {
        guard let task = line.task else { return false }
        if let taskGlob, fnmatch(taskGlob, task, 0) != 0 { return false }
        if !all, line.outcome == LogOutcome.ok.rawValue { return false }
        if statuses.isEmpty, statusClasses.isEmpty, errorKinds.isEmpty { return true }
        if let status = line.status,
            statuses.contains(status) || statusClasses.contains(status / 100)
        {
            return true
        }
        return line.errorKind.map { errorKinds.contains($0) } ?? false
    }
}
