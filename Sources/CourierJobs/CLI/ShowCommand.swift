import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier show LOG.jsonl|DIR... TASK`: one task's requests from run logs, as a person reads
/// them (the request, the response head, timings, the outcome), instead of JSON lines.
enum ShowCommand {
    static let usage = """
        Usage: courier show LOG.jsonl...|JOB.json TASK
        Prints every attempt of the task TASK (an id, or a glob such as 'user-*') in the logs,
        oldest first: the request line and headers, the body as logged, the response status and
        headers, the timings and the outcome. Secrets are shown as the log has them: redacted.
        A folder stands for every .jsonl in it (jobs/logs/nightly/), and a job file for its logs
        (logs/<name>/ in its home). Exit 0 when some attempt was
        found, 1 when none was (the tasks the logs have are listed), 2 on bad usage.
        """

    static func run(_ arguments: [String]) -> Int32 {
        var parser = ArgumentParser(arguments, command: "show")
        var operands: [String] = []
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            operands = parser.positionals()
            try parser.finish()
            guard operands.count >= 2 else {
                throw UsageError(
                    "show: expects LOG.jsonl... and a TASK; see 'courier show --help'")
            }
        } catch {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        let task = operands.removeLast()
        let paths = LogFiles.ordered(LogFiles.expandingFolders(operands))
        // A wrong path is not "no such task": exit 2, as `report` and `replay` (trial EEE).
        let unreadable = LogReader.problems(paths)
        guard unreadable.isEmpty else {
            for problem in unreadable { Console.error("courier show: \(problem)") }
            return CommandLineInterface.ExitCode.usage
        }
        var reader = LogReader(paths: paths, warn: { Console.error("courier: \($0)") })
        reader.responseHeaders = true
        var shown = 0
        var read = 0
        var others: [String] = []
        for entry in reader {
            read += 1
            guard entry.line.event == LogEvent.request, let id = entry.line.task else { continue }
            guard id == task || fnmatch(task, id, 0) == 0 else {
                if others.count < 10, !others.contains(id) { others.append(id) }
                continue
            }
            if shown > 0 { Console.output("") }
            Console.output(describe(entry.line, file: entry.file))
            shown += 1
        }
        // Files that hold no log line at all are a wrong path, as `report` says (trial FFF:
        // `show` said "no attempt of task", exit 1, of a job file given as a log).
        guard read > 0 else {
            Console.error(
                "courier show: no log lines could be read from \(operands.joined(separator: ", "))")
            return CommandLineInterface.ExitCode.usage
        }
        guard shown > 0 else {
            let listed =
                others.isEmpty
                ? "the logs have no request lines"
                : "tasks there include: \(others.joined(separator: ", "))"
            Console.error("courier show: no attempt of task '\(task)' in the logs; \(listed)")
            return CommandLineInterface.ExitCode.taskFailed
        }
        return CommandLineInterface.ExitCode.success
    }

    /// One attempt, in the shape of `curl -v`: `>` what was sent, `<` what came back.
    static func describe(_ line: LogLine, file: String) -> String {
        var lines: [String] = []
        let when = ReportTime.rfc3339(line.time)
        lines.append(
            "task \(line.task ?? "?")\(line.page.map { " · page \($0)" } ?? "") · attempt \(line.attempt ?? 1) · \(line.outcome ?? "?") · run \(line.run) · \(when) · \(file)"
        )
        lines.append("> \(line.method ?? "GET") \(line.url ?? "?")")
        for header in line.requestHeaders { lines.append("> \(header.name): \(header.value)") }
        switch line.requestBody {
        case .text(let text):
            let shown = text.count > 2048 ? String(text.prefix(2048)) + " …" : text
            lines.append(">")
            lines.append(
                contentsOf: shown.split(separator: "\n", omittingEmptySubsequences: false).map {
                    "> \($0)"
                })
        case .base64(let data): lines.append("> (a binary body of \(data.count) bytes)")
        case .omitted(let bytes, let sha256):
            lines.append("> (a body of \(bytes) bytes, not logged; SHA-256 \(sha256))")
        case .undecodable(let reason):
            lines.append("> (a body the log cannot give back: \(reason))")
        case nil: break
        }
        if let status = line.status {
            var head = "< \(status)"
            if let bytes = line.bytesReceived { head += " · \(bytes) bytes" }
            if line.notModified { head += " · not modified" }
            if let redirects = line.redirects, redirects > 0 {
                head += " · after \(redirects) redirect\(redirects == 1 ? "" : "s")"
                if let final = line.finalURL { head += " to \(final)" }
            }
            lines.append(head)
            for header in line.responseHeaders { lines.append("< \(header.name): \(header.value)") }
        } else {
            lines.append("< (no response)")
        }
        if let kind = line.errorKind {
            lines.append("! \(kind): \(line.errorMessage ?? "")")
        }
        lines.append("  " + timings(line))
        // Each line on its own: a value's control characters are shown, never obeyed.
        return lines.map(\.showingControlCharacters).joined(separator: "\n")
    }

    /// The attempt's timings, those the log has: waits, then the request's phases.
    static func timings(_ line: LogLine) -> String {
        let phases: [(String, Double?)] = [
            ("blocked", line.blockedMs), ("throttled", line.throttledMs), ("dns", line.dnsMs),
            ("connect", line.connectMs), ("tls", line.tlsMs), ("first byte", line.firstByteMs),
            ("total", line.totalMs),
        ]
        let shown = phases.compactMap { name, value in
            value.map { "\(name) \(String(format: "%.1f", $0)) ms" }
        }
        return shown.isEmpty ? "(no timings)" : shown.joined(separator: " · ")
    }
}
