import Courier
import Foundation

/// `courier replay`'s command line, checked.
extension ReplayCommand {
    static func parse(_ parser: inout ArgumentParser) throws(UsageError) -> Options {
        var options = Options()
        options.jobPath = try parser.option("--job")
        options.filter.all = parser.flag("--all")
        if let text = try parser.option("--status") {
            (options.filter.statuses, options.filter.statusClasses) = try ReplayFilter.statuses(
                text)
        }
        if let text = try parser.option("--error-kind") {
            options.filter.errorKinds = try ReplayFilter.errorKinds(text)
        }
        options.filter.taskGlob = try parser.option("--task")
        if let glob = options.filter.taskGlob, WriteRule.names(glob) { options.run.named = [glob] }
        for header in try parser.all("--header") {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw UsageError("replay: --header expects 'Name: value', got '\(header)'")
            }
            options.headers.append(
                (
                    String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                    String(header[header.index(after: colon)...]).trimmingCharacters(
                        in: .whitespaces)
                ))
        }
        if let pace = try parser.option("--pace") {
            guard pace == "asap" || pace == "logged" else {
                throw UsageError("replay: --pace expects asap or logged, got '\(pace)'")
            }
            options.paced = pace == "logged"
        }
        if let speed = try parser.option("--speed") {
            guard let value = Double(speed), value > 0, value.isFinite else {
                throw UsageError("replay: --speed expects a number greater than 0, got '\(speed)'")
            }
            options.speed = value
        }
        options.dryRun = parser.flag("--dry-run")
        if let format = try parser.option("--format") {
            guard format == "plan" || format == "curl" else {
                throw UsageError("replay: --format expects plan or curl, got '\(format)'")
            }
            options.curlFormat = format == "curl"
            // A format is a way to print what would be sent: asked for alone (`> retry.sh`),
            // it had sent every request and written the run's summary into the script.
            options.dryRun = true
        }
        if let name = try parser.option("--backend") {
            guard let backend = Backend(rawValue: name) else {
                throw UsageError("replay: --backend expects curl or urlsession, got '\(name)'")
            }
            options.run.backend = backend
        }
        options.run.concurrency = try parser.optionalInteger("--concurrency", range: 1...10_000)
        if let folder = try parser.option("--log-dir") {
            options.run.logDirectory = URL(fileURLWithPath: folder)
            options.logDirectoryGiven = true
        }
        if let base = try parser.option("--base-url") {
            if let problem = HARImport.baseURLProblem(base) {
                throw UsageError("replay: --base-url \(problem)")
            }
            options.baseURL = base
        }
        options.run.quiet = parser.flag("--quiet")
        options.run.progress = !parser.flag("--no-progress")
        options.logs = parser.positionals()
        try parser.finish()
        if options.baseURL != nil, options.jobPath == nil {
            throw UsageError(
                "replay: --base-url needs --job (a replay from the log alone sends the logged URLs)"
            )
        }
        guard !options.logs.isEmpty || options.jobPath != nil else {
            throw UsageError(
                "replay: missing LOG.jsonl (or --job JOB.json, whose history is read); see 'courier replay --help'"
            )
        }
        return options
    }
}
