import Courier
import Foundation

/// `courier report LOG... [--json] [--junit FILE] [--html FILE] [--otlp FILE] [--otlp-endpoint URL]`
enum ReportCommand {
    static let usage = """
        Usage: courier report LOG.jsonl... [--last N] [--since WHEN] [--json] [--junit FILE]
                              [--html FILE] [--otlp FILE] [--otlp-endpoint URL]
        Summarises runs from their logs (- is stdin; a folder is every .jsonl under it; a job
        file JOB.json is every log of that job, in its home's logs/), per job and merged over
        every file given (shards, replays, resumed runs): each run (a run killed before its
        end is shown as killed), tasks by final outcome (once each), requests, retries,
        statuses, error kinds, the achieved rate, latency percentiles overall and per phase,
        the slowest tasks and the failures grouped by error.
          --last N       only the N latest nights: a run (every shard of its split) with
                         the resumes, replays and --task runs after it
          --since WHEN   only runs that started at or after WHEN: a time back from now
                         (36h, 7d, 30m) or a UTC date or time (2026-11-20, 2026-11-20T02:00Z)
          --json         the report as JSON on stdout (schema: docs/report.md)
          --junit FILE   JUnit XML, one test case per task, for CI dashboards
          --html FILE    one self-contained HTML page with charts
          --otlp FILE    OpenTelemetry traces as OTLP/JSON: a trace per run, a span per
                         request attempt (the mapping: docs/report.md)
          --otlp-endpoint URL
                         POST the same traces to an OTLP/HTTP receiver (a base URL gets
                         /v1/traces: http://collector:4318)
        Exit codes: 0 reported, 1 the endpoint did not take the traces, 2 bad usage or no
        log line could be read.
        """

    /// What the command line asks for.
    struct Options {
        var json = false
        var junit: String?
        var html: String?
        var otlp: String?
        var endpoint: URL?
        var logs: [String] = []
        var last: Int?
        var since: Double?
    }

    static func run(_ arguments: [String]) async -> Int32 {
        var options: Options
        switch ArgumentParser.parse(arguments, command: "report", usage: usage, parse) {
        case .options(let parsed): options = parsed
        case .exit(let status): return status
        }
        if options.last != nil || options.since != nil {
            options.logs = ReportWindow.select(
                LogFiles.ordered(LogFiles.expandingFolders(options.logs)), last: options.last,
                since: options.since)
            guard !options.logs.isEmpty else {
                Console.error("courier report: no run in the logs given starts in that window")
                return CommandLineInterface.ExitCode.usage
            }
        }
        let wantsTraces = options.otlp != nil || options.endpoint != nil
        // OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS as a run's own export uses them, so
        // that exporting its log again lands in the same service, past the same gateway.
        let otlp = OTLPEnvironment(ProcessInfo.processInfo.environment)
        let (all, traces) = read(
            options.logs, everyTask: options.junit != nil,
            traces: wantsTraces ? otlp.serviceName : nil)
        guard !all.isEmpty else {
            Console.error("courier report: no log lines could be read")
            return CommandLineInterface.ExitCode.usage
        }
        do {
            if let junit = options.junit {
                try OutputFile.write(
                    Data(ReportJUnit.render(all).utf8), to: URL(fileURLWithPath: junit))
            }
            if let html = options.html {
                try OutputFile.write(
                    Data(ReportHTML.render(all).utf8), to: URL(fileURLWithPath: html))
            }
            if let otlp = options.otlp, let traces {
                try OutputFile.write(
                    Data(JSONWriter.bytes(traces.value())), to: URL(fileURLWithPath: otlp))
            }
        } catch {
            Console.error("courier report: \(error)")
            return CommandLineInterface.ExitCode.usage
        }
        if options.json {
            Console.output(JSONWriter.string(ReportJSON.value(all)))
        } else {
            Console.output(all.map(ReportText.render).joined(separator: "\n\n"))
        }
        if let endpoint = options.endpoint, let traces {
            do throws(OTLPUpload.Failure) {
                try await OTLPUpload.send(
                    JSONWriter.bytes(traces.value()), to: endpoint, headers: otlp.headers)
            } catch {
                // The collector's answer, quoted, may echo the header values (secrets).
                let redactor = Redactor(secrets: Set(otlp.headers.map(\.value)))
                Console.error("courier report: \(redactor.scrub(error.message))")
                return CommandLineInterface.ExitCode.taskFailed
            }
        }
        return CommandLineInterface.ExitCode.success
    }

    static func parse(_ parser: inout ArgumentParser) throws(UsageError) -> Options {
        var options = Options()
        options.json = parser.flag("--json")
        options.junit = try parser.outputFile("--junit")
        options.html = try parser.outputFile("--html")
        options.otlp = try parser.outputFile("--otlp")
        if let text = try parser.option("--otlp-endpoint") {
            guard let url = OTLPUpload.tracesURL(text) else {
                throw UsageError("report: --otlp-endpoint takes an http or https URL")
            }
            options.endpoint = url
        }
        options.last = try parser.optionalInteger("--last", range: 1...1_000_000)
        if let text = try parser.option("--since") {
            guard let time = ReportWindow.start(text, now: Date().timeIntervalSince1970) else {
                throw UsageError(
                    "report: --since expects a time back from now (36h, 7d, 30m) or a UTC date or time (2026-11-20, 2026-11-20T02:00Z), got '\(text)'"
                )
            }
            options.since = time
        }
        options.logs = parser.positionals()
        try parser.finish()
        guard !options.logs.isEmpty else {
            throw UsageError("report: missing LOG.jsonl; see 'courier report --help'")
        }
        return options
    }

    /// The job's `outputDir/.courier/records`, from the job file its latest run read (when it
    /// still reads here), for the parts a line of runs left (``JobHistory/otherLines``).
    static func recordsFolder(of report: RunReport?) -> URL? {
        guard
            let file = report?.runTable.rows.last(where: { $0.jobFile != nil })?.jobFile,
            file != "-", let job = try? JobDecoder.load(URL(fileURLWithPath: file))
        else { return nil }
        return URL(fileURLWithPath: job.outputDir).appendingPathComponent(".courier/records")
    }

    /// One report per job in the logs, in the order the jobs first appear, and the runs'
    /// traces, under `service` as their `service.name`, when asked for.
    static func read(_ logs: [String], everyTask: Bool, traces service: String?)
        -> ([RunReport], OTLPTraces?)
    {
        var reports: [String: RunReport] = [:]
        var order: [String] = []
        var traces = service.map { OTLPTraces(serviceName: $0) }
        let paths = LogFiles.ordered(logs)
        // Standard input is read once, as it comes: its lines all count.
        let (current, whole) = JobHistory.currentLogs(among: paths.filter { $0 != "-" })
        var file = (name: "", current: true)
        for entry in LogReader(paths: paths, warn: { Console.error("courier: \($0)") }) {
            let name = entry.line.job
            if reports[name] == nil {
                reports[name] = RunReport(job: name, keepEveryTask: everyTask)
                reports[name]?.historyWhole = whole[name]
                order.append(name)
            }
            // Looked up once a file: a report reads a million lines.
            if entry.file != file.name {
                file = (entry.file, entry.file == "(stdin)" || current.contains(entry.file))
            }
            reports[name]!.add(entry.line, file: entry.file, current: file.current)
            traces?.add(entry.line)
        }
        let all = order.compactMap { name -> RunReport? in
            reports[name]?.finish()
            // A job's logs in its log folder: what its other line of runs left (a backfill's).
            if let file = reports[name]?.runTable.rows.last?.file, file != "(stdin)" {
                let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
                if folder.lastPathComponent == name {
                    let records = recordsFolder(of: reports[name])
                    reports[name]?.otherLines = JobHistory.otherLines(
                        folder: folder, records: records)
                }
            }
            return reports[name]
        }
        return (all, traces)
    }
}
