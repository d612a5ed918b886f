import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `courier run`'s command line asks for, parsed and checked before the job is read.
struct RunArguments {
    var options = RunOptions()
    var jobPath = ""
    var dryRun = false
    var freshIfNoHistory = false
    /// `--once-per KEY`: resume the run of this shard that KEY started, else start one.
    var oncePer: String?
    /// Whether `--log-dir` named the log folder (else it is the job's home's `logs/`).
    var logDirectoryGiven = false
    var json = false
    var baseURL: String?
    /// `--window START..END`: a backfill of that range for every `window` task.
    var window: WindowOverride?
    /// `--task GLOB…`.
    var only: [String] = []
    var pingURL: String?
    /// `--record DIR`, `--offline DIR`: keep every answer, or rehearse against those kept.
    /// `--trace`: `traceparent` on every request, as the job's `"trace": true`.
    var trace = false
    var record: URL?
    var offline: URL?
    /// `--resume`, and the logs it names, if any.
    var resume = false
    var resumeLogs: [String] = []
    /// The `--ping-url` and `--metrics-push` values' secrets: known before anything is parsed,
    /// so that no message, a usage error's included, shows them.
    var argumentSecrets: Set<String> = []
}

extension RunCommand {
    /// `--resume` names a log, not the folder of them: said in words, not left to the job's
    /// place to call "unexpected" (trial P).
    private static func refuseFolder(_ argument: String) throws(UsageError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder),
            isFolder.boolValue
        else { return }
        throw UsageError(
            "run: --resume takes a log file (.jsonl), or nothing for the job's history; \(argument) is a folder"
        )
    }

    /// `--resume JOB.json` after the job was given (`run job.json --resume job.json`): said
    /// in words, where the parser would call the second job "unexpected".
    private static func refuseJobFile(_ argument: String, after earlier: ArraySlice<String>)
        throws(UsageError)
    {
        guard argument.hasSuffix(".json"),
            earlier.contains(where: { $0.hasSuffix(".json") && !$0.hasPrefix("-") })
        else { return }
        throw UsageError(
            "run: --resume takes a log file (.jsonl), or nothing for the job's history; \(argument) is a job file, and the job is given already"
        )
    }

    /// Parses `arguments`; `nil` when `--help` was asked for (and printed).
    static func parse(_ arguments: [String]) throws(UsageError) -> RunArguments? {
        var arguments = arguments
        var parsed = RunArguments()
        parsed.argumentSecrets = argumentSecrets(arguments)
        // `--resume` takes an optional LOG: the next argument when it names a .jsonl file.
        if let index = arguments.firstIndex(where: { $0 == "--resume" || $0.hasPrefix("--resume=") }
        ) {
            parsed.resume = true
            if arguments[index].hasPrefix("--resume=") {
                parsed.resumeLogs = [String(arguments[index].dropFirst("--resume=".count))]
            } else {
                while index + 1 < arguments.count, arguments[index + 1].hasSuffix(".jsonl"),
                    !arguments[index + 1].hasPrefix("-")
                {
                    parsed.resumeLogs.append(arguments.remove(at: index + 1))
                }
                if parsed.resumeLogs.isEmpty, index + 1 < arguments.count {
                    try refuseFolder(arguments[index + 1])
                    try refuseJobFile(arguments[index + 1], after: arguments[..<index])
                }
            }
            arguments.remove(at: index)
            if arguments.contains(where: { $0 == "--resume" || $0.hasPrefix("--resume=") }) {
                throw UsageError("run: --resume is given twice; give it once")
            }
        }
        var parser = ArgumentParser(arguments, command: "run")
        // Taken out above; asked for here so that a misspelt `--resme` is told "did you mean".
        _ = parser.flag("--resume")
        if parser.flag("--help") {
            Console.output(usage)
            return nil
        }
        try parseOptions(&parser, into: &parsed)
        parsed.dryRun = parser.flag("--dry-run")
        parsed.freshIfNoHistory = parser.flag("--fresh-if-no-history")
        parsed.oncePer = try parser.option("--once-per")
        try checkOncePer(parsed)
        parsed.options.quiet = parser.flag("--quiet")
        parsed.options.progress = !parser.flag("--no-progress")
        parsed.json = parser.flag("--json")
        if parsed.json, parsed.dryRun {
            // The JSON object is a run's summary; a dry run prints a plan, as text (trial EEE:
            // `--json` was passed over without a word).
            throw UsageError(
                "run: --json prints the summary of a run; a dry run prints its plan as text: give one of --json and --dry-run"
            )
        }
        parsed.trace = parser.flag("--trace")
        parsed.only = try parser.all("--task")
        if parsed.only.contains(where: \.isEmpty) {
            throw UsageError("run: --task expects a task id or glob")
        }
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["COURIER_CAPTURE_MEMORY"], let limit = Int(text), limit > 0 {
            parsed.options.captureMemoryLimit = limit
        }
        if let text = environment["COURIER_RECORDS_RUN_BYTES"], let limit = Int(text), limit > 0 {
            parsed.options.recordsRunBytes = limit
        }
        parsed.jobPath = try parser.positional("JOB.json")
        try parser.finish()
        return parsed
    }

    /// `--once-per KEY` decides itself whether the run resumes: with `--resume` or
    /// `--fresh-if-no-history` it would be said twice; with `--log-dir -` there is no history
    /// to find KEY in.
    private static func checkOncePer(_ parsed: RunArguments) throws(UsageError) {
        guard let key = parsed.oncePer else { return }
        guard !key.isEmpty else {
            throw UsageError("run: --once-per expects a key (the Kubernetes Job's name, say)")
        }
        if parsed.resume || parsed.freshIfNoHistory {
            throw UsageError(
                "run: --once-per resumes the run its key started, or starts one; give it without --resume and --fresh-if-no-history"
            )
        }
        if parsed.options.logToStandardOutput {
            throw UsageError(
                "run: --once-per finds its key's run in the job's log folder; --log-dir - keeps none"
            )
        }
    }

    /// The options that shape the run: transport, deadline, base URL, log folder, shard, ping
    /// and metrics.
    private static func parseOptions(
        _ parser: inout ArgumentParser, into parsed: inout RunArguments
    ) throws(UsageError) {
        if let name = try parser.option("--backend") {
            guard let backend = Backend(rawValue: name) else {
                throw UsageError("run: --backend expects curl or urlsession, got '\(name)'")
            }
            parsed.options.backend = backend
        }
        parsed.options.concurrency = try parser.optionalInteger("--concurrency", range: 1...10_000)
        parsed.options.http2 = parser.flag("--http2")
        parsed.options.deadline = try parser.duration("--deadline")
        if let text = try parser.option("--window") {
            guard let range = WindowOverride(text) else {
                throw UsageError(
                    "run: --window expects START..END, each a time (2025-01-01, 2025-01-01T06:00:00Z or seconds since 1970), START before END; got '\(text)'"
                )
            }
            parsed.window = range
            parsed.options.window = text
        }
        parsed.baseURL = try parser.option("--base-url")
        if let text = parsed.baseURL, let problem = HARImport.baseURLProblem(text) {
            throw UsageError("run: --base-url \(problem), got '\(text)'")
        }
        if let grace = try parser.duration("--grace", allowZero: true) {
            parsed.options.gracePeriod = grace
        }
        if let folder = try parser.option("--log-dir") {
            if folder == "-" {
                parsed.options.logToStandardOutput = true
            } else {
                parsed.options.logDirectory = URL(fileURLWithPath: folder)
            }
            parsed.logDirectoryGiven = true
        }
        if let text = try parser.option("--shard") {
            guard let shard = Shard(text) else {
                throw UsageError(
                    "run: --shard expects I/N with 0 <= I < N <= \(Shard.maximumCount), got '\(text)'"
                )
            }
            parsed.options.shard = shard
        } else {
            parsed.options.shard = try shardFromEnvironment(ProcessInfo.processInfo.environment)
        }
        if let text = try parser.option("--ping-url") {
            guard Origin.httpURL(text) != nil else {
                throw UsageError(
                    "run: --ping-url expects an absolute http or https URL (not shown: a ping URL is a secret)"
                )
            }
            parsed.pingURL = text
        }
        (parsed.options.metrics, parsed.options.metricsPush) = try metricsSettings(&parser)
        parsed.record = try parser.option("--record").map { URL(fileURLWithPath: $0) }
        parsed.offline = try parser.option("--offline").map { URL(fileURLWithPath: $0) }
    }

    /// Every form of the secret URLs among the arguments (`--ping-url`, `--metrics-push` and
    /// the URL its `@FILE` holds), before they are parsed.
    static func argumentSecrets(_ arguments: [String]) -> Set<String> {
        let urls =
            values(of: "--ping-url", in: arguments)
            + values(of: "--metrics-push", in: arguments).compactMap(metricsPushURL)
        // A ping URL's forms: the URL, its path and query, its long segments.
        return urls.reduce(into: Set<String>()) { $0.formUnion(NotifySettings(ping: $1).secrets) }
    }

    /// Every value of the option `name` among the arguments, before they are parsed.
    private static func values(of name: String, in arguments: [String]) -> [String] {
        var values: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix(name + "=") {
                values.append(String(argument.dropFirst(name.count + 1)))
            } else if argument == name, index + 1 < arguments.count {
                values.append(arguments[index + 1])
            }
        }
        return values
    }

    /// `--metrics-file FILE`, `--metrics-push URL` and `--metrics-interval SECONDS`; the file's
    /// folder must exist.
    static func metricsSettings(_ parser: inout ArgumentParser) throws(UsageError)
        -> (MetricsSettings?, MetricsPushSettings?)
    {
        let given = try parser.optionalInteger("--metrics-interval", range: 1...86_400)
        let interval = given.map(TimeInterval.init) ?? MetricsSettings.defaultInterval
        let push = try metricsPush(&parser).map {
            MetricsPushSettings(gateway: $0, interval: interval)
        }
        guard let path = try parser.option("--metrics-file") else {
            if given != nil, push == nil {
                throw UsageError("run: --metrics-interval needs --metrics-file or --metrics-push")
            }
            return (nil, push)
        }
        let file = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        let folder = file.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder),
            isFolder.boolValue
        else {
            throw UsageError("run: --metrics-file: the folder \(folder) does not exist")
        }
        guard !path.hasSuffix("/"), file.lastPathComponent != "." else {
            throw UsageError("run: --metrics-file expects a file name, got '\(path)'")
        }
        return (MetricsSettings(file: file, interval: interval), push)
    }

    /// `--metrics-push URL`, or `@FILE` to read the URL from a file (a systemd credential, a
    /// mounted Secret), so that it is not on the command line for `ps` to show. Never shown.
    static func metricsPush(_ parser: inout ArgumentParser) throws(UsageError) -> URL? {
        guard let value = try parser.option("--metrics-push") else { return nil }
        guard let text = metricsPushURL(value) else {
            throw UsageError(
                "run: --metrics-push: cannot read the file \(value.dropFirst()) (it should hold the push gateway's URL)"
            )
        }
        guard let url = Origin.httpURL(text) else {
            throw UsageError(
                "run: --metrics-push expects the push gateway's absolute http or https URL, or @FILE holding it (not shown: the URL is a secret)"
            )
        }
        return url
    }

    /// The push URL a `--metrics-push` value gives: the value, or the first line of `@FILE`.
    static func metricsPushURL(_ value: String) -> String? {
        guard value.hasPrefix("@") else { return value }
        guard
            let data = try? FileSystem.read(
                URL(fileURLWithPath: String(value.dropFirst())), limit: 64 << 10)
        else { return nil }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    }

    /// The shard Kubernetes gives an Indexed Job's pod: `JOB_COMPLETION_INDEX` of
    /// `JOB_COMPLETIONS` (which the manifest sets to the Job's `completions`), or none when
    /// either is missing.
    static func shardFromEnvironment(_ environment: [String: String]) throws(UsageError) -> Shard? {
        guard let indexText = environment["JOB_COMPLETION_INDEX"] else { return nil }
        // Kubernetes sets the index alone: every pod would run the whole job (trial BB).
        guard let countText = environment["JOB_COMPLETIONS"] else {
            throw UsageError(
                "run: JOB_COMPLETION_INDEX=\(indexText) is set and JOB_COMPLETIONS is not: set JOB_COMPLETIONS to the Job's completions in the pod's env (docs/kubernetes.md), or give --shard I/N"
            )
        }
        guard let index = Int(indexText), let count = Int(countText),
            let shard = Shard(index: index, count: count)
        else {
            throw UsageError(
                "run: JOB_COMPLETION_INDEX=\(indexText) and JOB_COMPLETIONS=\(countText) are not a shard I/N with 0 <= I < N <= \(Shard.maximumCount)"
            )
        }
        return shard
    }
}
