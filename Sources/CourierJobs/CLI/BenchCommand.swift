import Courier
import CourierCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier bench URL|JOB.json [--backend curl,urlsession] [-n N | -d SECONDS] [-c N]
/// [--method M] [-H 'Name: value'] [--body TEXT|@FILE] [--warmup N] [--rounds R] [--rate R]
/// [--timeout SECONDS] [--http2] [--insecure] [--event-loops N] [--json]`
enum BenchCommand {
    static let usage = """
        Usage: courier bench URL|JOB.json [--backend curl,urlsession] [-n REQUESTS | -d SECONDS]
                                          [-c IN_FLIGHT] [--method M] [-H 'Name: value']
                                          [--body TEXT|@FILE] [--warmup N] [--rounds R]
                                          [--rate PER_SECOND] [--timeout SECONDS] [--http2]
                                          [--insecure] [--event-loops N] [--json]
        Sends URL (or, in job mode, the job's requests in turn: no saving, no retries) with
        IN_FLIGHT at once (default 64), REQUESTS times (default 10000) or for SECONDS, per
        backend (default curl). Backends alternate over R rounds (default 3: A B A B A B) and
        the medians are printed side by side: requests/s, latency p50/p90/p99/p99.9/max,
        errors by kind, CPU µs per request, peak RSS and the connections opened (counted by
        the curl backend from each transfer; URLSession on Linux cannot tell).
          --rate     send at a fixed rate; latency is then measured from when each request
                     was due (coordinated omission counted, as wrk2 and vegeta do)
          --warmup   requests per backend before measuring (default min(1000, REQUESTS);
                     with --rate, one second's worth, sent at the rate)
          --timeout  each request's deadline in seconds (default 30, or the job's); one that
                     passes it counts as a timeout error
          --http2    offer HTTP/2 over TLS (curl backend)
          --insecure do not verify the server's certificate (curl backend; a test server's)
          --event-loops  curl's event-loop threads, on which the senders run (default one
                     per core, at most 4; connection limits are shared between them)
          --json     one JSON object per backend, one per line (docs/cli.md lists the fields)
        """

    struct Options {
        var target = ""
        var backends: [Backend] = [.curl]
        var count = 10_000
        var duration: TimeInterval?
        var concurrency = 64
        var method = HTTPMethod.get
        var headers = HTTPHeaders()
        var body: Data?
        var warmup: Int?
        var rounds = 3
        var rate: Double?
        var json = false
        var insecure = false
        var http2 = false
        var eventLoops: Int?
        /// `--timeout`: each request's deadline; else the job's (job mode) or
        /// ``defaultTimeout``.
        var timeout: TimeInterval?
    }

    /// A URL's requests' deadline when `--timeout` gives none, as a job's default.
    static let defaultTimeout: TimeInterval = 30

    static func run(_ arguments: [String]) async -> Int32 {
        let options: Options
        let requests: [HTTPRequest]
        do {
            var parser = ArgumentParser(arguments, command: "bench")
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            options = try parse(&parser)
            requests = try makeRequests(options)
        } catch let error as UsageError {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        } catch let error as JobFileErrors {
            for line in error.errors { Console.error("courier: \(line)") }
            return CommandLineInterface.ExitCode.usage
        } catch {
            Console.error("courier bench: \(error)")
            return CommandLineInterface.ExitCode.usage
        }

        let count = options.duration == nil ? options.count : Int.max
        let plan = BenchmarkRunner.Plan(
            requests: requests, count: count, duration: options.duration,
            concurrency: options.concurrency, rate: options.rate)
        let showsProgress = Progress.canDraw && !options.json
        var clients: [Backend: any HTTPClient] = [:]
        var results: [Backend: [BenchmarkRunner.Result]] = [:]
        let schedule = BenchSchedule.order(backends: options.backends, rounds: options.rounds)
        for (step, (round, backend)) in schedule.enumerated() {
            var roundPlan = plan
            if clients[backend] == nil {
                clients[backend] = backend.makeClient(
                    maxConnectionsPerHost: options.concurrency, http2: options.http2,
                    eventLoops: options.eventLoops)
                roundPlan.warmup = options.warmup ?? Self.defaultWarmup(options)
            }
            let label = "[\(step + 1)/\(schedule.count)] \(backend.rawValue) round \(round)"
            let total = options.duration == nil ? " of \(options.count)" : ""
            var progress: (@Sendable (Int) -> Void)?
            if showsProgress {
                progress = { done in
                    Console.overwriteLine("\(label): \(done)\(total)")
                }
            }
            let runner = BenchmarkRunner(
                backend: backend.rawValue, client: clients[backend]!, progress: progress)
            results[backend, default: []].append(await runner.run(roundPlan, round: round))
        }
        if showsProgress { Console.overwriteLine() }
        let summaries = options.backends.compactMap { backend in
            results[backend].map {
                BenchSummary(
                    backend: backend.rawValue, rounds: $0,
                    eventLoops: (clients[backend] as? CurlHTTPClient)?.statistics.eventLoops)
            }
        }
        Console.output(
            options.json
                ? jsonLines(summaries)
                : heading(options) + "\n" + table(summaries, paced: options.rate != nil))
        return verdict(summaries)
    }

    /// Requests per backend before measuring: 1,000 (or all of them); with `--rate`, one
    /// second's worth, since the warm-up keeps the rate (a thousand at 10 a second would be
    /// a 100 s warm-up).
    static func defaultWarmup(_ options: Options) -> Int {
        guard let rate = options.rate else { return min(1_000, options.count) }
        return min(1_000, options.count, max(1, Int(rate.rounded(.up))))
    }

    /// Says so when a backend's figures time failures rather than answers (a trial saw a
    /// closed port "rank" the backends by how fast they fail): exit 1 when every request of a
    /// backend failed to get an answer; a warning when some did (trial PPP: half the requests
    /// refused, and the backend's req/s looked better than a healthy run's), or when every
    /// answer was an error status.
    static func verdict(_ summaries: [BenchSummary]) -> Int32 {
        var status = CommandLineInterface.ExitCode.success
        for summary in summaries {
            let sent = summary.rounds.map(\.requests).reduce(0, +)
            let failed = summary.errors.values.reduce(0, +)
            guard sent > 0 else { continue }
            if failed >= sent {
                Console.error(
                    "courier bench: \(summary.backend): every request failed (\(summary.errorsText)): its figures time failures, not answers"
                )
                status = CommandLineInterface.ExitCode.taskFailed
            } else if failed > 0 {
                let share = Double(failed) / Double(sent) * 100
                Console.error(
                    "courier bench: warning: \(summary.backend): \(failed) of \(sent) requests failed (\(String(format: "%.1f", share)) %: \(summary.errorsText)): its figures count those failures, so they do not compare with a run that had none"
                )
            } else if summary.non2xx >= sent - failed {
                Console.error(
                    "courier bench: warning: \(summary.backend): every answer had an error status (\(summary.statusesText)): its figures time those answers"
                )
            }
        }
        return status
    }

    static func parse(_ parser: inout ArgumentParser) throws -> Options {
        var options = Options()
        if let names = try parser.option("--backend") {
            options.backends = try backends(names)
        }
        let count = try parser.optionalInteger("-n", range: 1...100_000_000)
        options.count = count ?? 10_000
        if let seconds = try parser.option("-d") {
            guard let value = Double(seconds), value > 0, value <= 86_400 else {
                throw UsageError(
                    "bench: -d expects seconds above 0, at most 86400, got '\(seconds)'")
            }
            guard count == nil else {
                throw UsageError("bench: give -n REQUESTS or -d SECONDS, not both")
            }
            options.duration = value
        }
        if let seconds = try parser.option("--timeout") {
            guard let value = Double(seconds), value > 0, value <= 86_400 else {
                throw UsageError(
                    "bench: --timeout expects seconds above 0, at most 86400, got '\(seconds)'")
            }
            options.timeout = value
        }
        options.concurrency = try parser.integer("-c", default: 64, range: 1...10_000)
        if let method = try parser.option("--method") {
            options.method = HTTPMethod(method.uppercased())
            guard options.method.isValidToken else {
                throw UsageError("bench: --method expects an HTTP method, got '\(method)'")
            }
        }
        for header in try parser.all("-H") {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw UsageError("bench: -H expects 'Name: value', got '\(header)'")
            }
            options.headers.add(
                String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        if let body = try parser.option("--body") {
            if body.hasPrefix("@") {
                do {
                    options.body = Data(
                        try FileSystem.read(URL(fileURLWithPath: String(body.dropFirst()))))
                } catch {
                    throw UsageError("bench: --body \(body): \(error)")
                }
            } else {
                options.body = Data(body.utf8)
            }
        }
        options.warmup = try parser.optionalInteger("--warmup", range: 0...1_000_000)
        options.rounds = try parser.integer("--rounds", default: 3, range: 1...100)
        if let rate = try parser.option("--rate") {
            guard let value = Double(rate), value > 0, value.isFinite else {
                throw UsageError("bench: --rate expects requests per second above 0, got '\(rate)'")
            }
            options.rate = value
        }
        options.json = parser.flag("--json")
        options.insecure = parser.flag("--insecure")
        options.http2 = parser.flag("--http2")
        if options.http2, !options.backends.contains(.curl) {
            // Said, not refused: the same command may name curl in another run.
            Console.error(
                "courier bench: warning: --http2 is the curl backend's; urlsession negotiates HTTP/2 on its own"
            )
        }
        options.eventLoops = try parser.optionalInteger("--event-loops", range: 1...64)
        options.target = try parser.positional("URL or JOB.json")
        try parser.finish()
        return options
    }

    /// `curl,urlsession`: each backend once, at least one.
    static func backends(_ names: String) throws(UsageError) -> [Backend] {
        var backends: [Backend] = []
        for name in names.split(separator: ",", omittingEmptySubsequences: false) {
            guard let backend = Backend(rawValue: String(name)) else {
                throw UsageError(
                    "bench: unknown backend '\(name)' in --backend (expected curl, urlsession or curl,urlsession)"
                )
            }
            guard !backends.contains(backend) else {
                throw UsageError("bench: --backend names \(name) twice; give each backend once")
            }
            backends.append(backend)
        }
        return backends
    }

    /// The URL's request, or in job mode every task's request.
    static func makeRequests(_ options: Options) throws -> [HTTPRequest] {
        if options.target.hasSuffix(".json"), !options.target.contains("://") {
            let job = try JobDecoder.load(URL(fileURLWithPath: options.target))
            _ = try JobValidator.validate(job)
            // A task that takes a captured value ({token}, a fan-out's id) has no request
            // until the task that captures it runs, which bench does not do: sent as written,
            // `Bearer {token}` would measure 401s (a trial saw exactly that).
            // Named by id, the name the job file gives (trial OO: `tasks[2]`).
            let waiting = job.tasks.filter(\.isDependent).map { "task \($0.id)" }
            if !waiting.isEmpty {
                Console.error(
                    "courier bench: \(waiting.joined(separator: ", ")) take\(waiting.count == 1 ? "s" : "") captured values, which bench never has (it sends each request as written and captures nothing): left out"
                )
            }
            var requests: [HTTPRequest] = []
            for case .success(let task) in TaskExpander(job: job)
            where task.spec(in: job)?.isDependent != true {
                var request = task.request
                if options.insecure { request.validatesTLS = false }
                if let timeout = options.timeout { request.timeout = timeout }
                requests.append(request)
                if requests.count >= 1_000_000 { break }
            }
            guard !requests.isEmpty else {
                throw UsageError("bench: the job has no task that takes no captured value")
            }
            return requests
        }
        guard let url = Origin.httpURL(options.target) else {
            throw UsageError(
                "bench: '\(options.target)' is not an http or https URL with a host (and a port, if any, from 1 to 65535)"
            )
        }
        var request = HTTPRequest(
            url: url, method: options.method, headers: options.headers, body: options.body)
        // A test server's throwaway certificate; URLSession on Linux cannot honour this
        // (docs/transports.md).
        request.validatesTLS = !options.insecure
        request.timeout = options.timeout ?? Self.defaultTimeout
        return [request]
    }

    static func jsonLines(_ summaries: [BenchSummary]) -> String {
        summaries.map { JSONWriter.string($0.json) }.joined(separator: "\n")
    }
}

/// One backend's rounds, summarised: medians of the per-round figures, latency over all rounds.
struct BenchSummary {
    let backend: String
    let rounds: [BenchmarkRunner.Result]
    let latency: LatencyHistogram
    /// The curl backend's event-loop threads (`nil` for URLSession).
    let eventLoops: Int?

    init(backend: String, rounds: [BenchmarkRunner.Result], eventLoops: Int? = nil) {
        self.backend = backend
        self.rounds = rounds
        self.eventLoops = eventLoops
        var latency = LatencyHistogram()
        for round in rounds { latency.merge(round.latency) }
        self.latency = latency
    }

    var requestsPerSecond: Double { BenchSchedule.median(rounds.map(\.requestsPerSecond)) }
    var cpuMicrosecondsPerRequest: Double {
        BenchSchedule.median(rounds.map(\.cpuMicrosecondsPerRequest))
    }
    var errors: [String: Int] {
        rounds.reduce(into: [:]) { $0.merge($1.errors, uniquingKeysWith: +) }
    }
    var non2xx: Int { rounds.map(\.non2xx).reduce(0, +) }
    /// The non-2xx answers, by status: `404 ×500`.
    var statusesText: String {
        let statuses = rounds.reduce(into: [Int: Int]()) {
            $0.merge($1.non2xxStatuses, uniquingKeysWith: +)
        }
        return statuses.sorted { $0.key < $1.key }.map { "status \($0.key) ×\($0.value)" }
            .joined(separator: ", ")
    }
    var peakRSS: Int { rounds.map(\.peakRSS).max() ?? 0 }
    /// Connections opened over all rounds, warm-up included: the client is kept between rounds,
    /// so with keep-alive this is about IN_FLIGHT (`nil` when the backend cannot tell).
    var connections: Int? {
        let known = rounds.compactMap(\.connections)
        return known.isEmpty ? nil : known.reduce(0, +)
    }
    var errorsText: String {
        let errors = errors
        guard !errors.isEmpty else { return "0" }
        return errors.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(
            separator: ", ")
    }

    var json: JSONWriter.Value {
        .object([
            ("backend", .string(backend)),
            ("rounds", .int(rounds.count)),
            // Counts are over every measured round (the warm-up left out), as `errors` and
            // `seconds` are; rates and CPU per request are the rounds' medians.
            ("requests", .int(rounds.map(\.requests).reduce(0, +))),
            ("roundsRequests", .array(rounds.map { .int($0.requests) })),
            ("concurrency", .int(rounds.first?.concurrency ?? 0)),
            ("eventLoops", eventLoops.map { .int($0) } ?? .null),
            ("requestsPerSecond", .double(requestsPerSecond)),
            ("roundsRequestsPerSecond", .array(rounds.map { .double($0.requestsPerSecond) })),
            (
                "latencyMs",
                .object([
                    ("p50", .double(latency.percentile(50))),
                    ("p90", .double(latency.percentile(90))),
                    ("p99", .double(latency.percentile(99))),
                    ("p999", .double(latency.percentile(99.9))),
                    ("max", .double(latency.maxMilliseconds)),
                ])
            ),
            ("errors", .int(errors.values.reduce(0, +))),
            (
                "errorsByKind",
                .object(errors.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
            ),
            ("non2xx", .int(non2xx)),
            ("bytes", .int(rounds.map(\.bytes).reduce(0, +))),
            ("seconds", .double(rounds.map(\.seconds).reduce(0, +))),
            ("cpuSeconds", .double(rounds.map(\.cpuSeconds).reduce(0, +))),
            ("cpuMicrosecondsPerRequest", .double(cpuMicrosecondsPerRequest)),
            ("peakRSSBytes", .int(peakRSS)),
            ("connections", connections.map { .int($0) } ?? .null),
        ])
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
