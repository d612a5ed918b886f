import Courier
import CourierCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends requests through an ``HTTPClient`` with a fixed number in flight, and measures
/// throughput, latency, errors and CPU time. Timings are for a benchmark run, never for a test
/// verdict.
struct BenchmarkRunner: Sendable {
    /// What to run.
    struct Plan: Sendable {
        /// The requests, sent in turn (one for a URL, a job's tasks in job mode).
        var requests: [HTTPRequest]
        /// How many to send; with `duration`, the most to send.
        var count: Int
        /// Send for this long instead of a count.
        var duration: TimeInterval?
        var concurrency: Int
        /// Requests sent before measuring, to open connections and warm caches.
        var warmup: Int
        /// A fixed send rate (requests per second). Latency is then measured from when each
        /// request was due, not when it left, so a stalled server shows as latency rather than
        /// as fewer requests (coordinated omission, as wrk2 and vegeta count it).
        var rate: Double?

        init(
            requests: [HTTPRequest], count: Int, duration: TimeInterval? = nil, concurrency: Int,
            warmup: Int = 0, rate: Double? = nil
        ) {
            self.requests = requests
            self.count = count
            self.duration = duration
            self.concurrency = concurrency
            self.warmup = warmup
            self.rate = rate
        }
    }

    /// What one round measured.
    struct Result: Sendable {
        var backend: String
        var round: Int
        var requests: Int
        var concurrency: Int
        /// Transport errors by kind (`timeout`, `connect`, …).
        var errors: [String: Int]
        var bytes: Int
        var seconds: Double
        var cpuSeconds: Double
        /// The process's peak resident set after the round, in bytes.
        var peakRSS: Int
        /// Connections the client opened, counted from each response (`nil` when the backend
        /// cannot tell).
        var connections: Int?
        var latency: LatencyHistogram
        /// The non-2xx answers by status, which the warning names (a count alone, "500
        /// non-2xx", read as a status 500 to a trial).
        var non2xxStatuses: [Int: Int] = [:]
        var non2xx: Int { non2xxStatuses.values.reduce(0, +) }

        var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
        var cpuMicrosecondsPerRequest: Double {
            requests > 0 ? cpuSeconds / Double(requests) * 1e6 : 0
        }
    }

    let backend: String
    let client: any HTTPClient
    /// Called with the requests done so far, for a progress line.
    let progress: (@Sendable (Int) -> Void)?

    init(backend: String, client: any HTTPClient) {
        self.init(backend: backend, client: client, progress: nil)
    }

    init(backend: String, client: any HTTPClient, progress: (@Sendable (Int) -> Void)?) {
        self.backend = backend
        self.client = client
        self.progress = progress
    }

    func run(_ plan: Plan, round: Int = 1) async -> Result {
        // Each round's peak is its own: the process's high-water mark would give a backend
        // run second the first one's peak (a trial saw both backends "42 MiB").
        Self.resetPeakRSS()
        var warmTally = Tally()
        if plan.warmup > 0 {
            var warm = plan
            warm.count = plan.warmup
            // At the rate, when one is given: a warm-up at full speed would be the load
            // `--rate` was chosen to spare the server (trial OO: 1,000 requests unpaced).
            warm.duration = nil
            warmTally = await send(warm)
        }
        let cpuBefore = Self.processCPUSeconds()
        let started = ContinuousClock.now
        let tally = await send(plan)
        let elapsed = started.duration(to: .now).seconds
        return Result(
            backend: backend, round: round, requests: tally.requests,
            concurrency: plan.concurrency, errors: tally.errors,
            bytes: tally.bytes, seconds: elapsed,
            cpuSeconds: Self.processCPUSeconds() - cpuBefore, peakRSS: Self.peakRSS(),
            // Connections are mostly opened while warming up, so those count too. The curl
            // backend can always tell: when every request failed, it opened none (trial L).
            connections: tally.connectionsKnown || warmTally.connectionsKnown
                || client is CurlHTTPClient
                ? tally.connections + warmTally.connections : nil,
            latency: tally.latency, non2xxStatuses: tally.non2xxStatuses)
    }

    private struct Tally: Sendable {
        var requests = 0
        var errors: [String: Int] = [:]
        var non2xxStatuses: [Int: Int] = [:]
        var bytes = 0
        var connections = 0
        var connectionsKnown = false
        var latency = LatencyHistogram()

        mutating func add(_ other: Tally) {
            requests += other.requests
            connections += other.connections
            connectionsKnown = connectionsKnown || other.connectionsKnown
            errors.merge(other.errors, uniquingKeysWith: +)
            non2xxStatuses.merge(other.non2xxStatuses, uniquingKeysWith: +)
            bytes += other.bytes
            latency.merge(other.latency)
        }
    }

    private func send(_ plan: Plan) async -> Tally {
        let client = self.client
        let progress = self.progress
        let workers = max(1, min(plan.concurrency, plan.count))
        // One shared ticket counter: ticket i is the i-th request, due at start + i / rate.
        let tickets = Locked(0)
        let start = ContinuousClock.now
        let deadline = plan.duration.map { start + .milliseconds(Int($0 * 1000)) }
        // On curl, the workers run on its loops in turn, as `courier run`'s tasks do: each
        // request then starts and resumes on its loop's thread, with no hand-off.
        let executors = (client as? CurlHTTPClient)?.taskExecutors ?? []
        return await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<workers {
                let executor = executors.isEmpty ? nil : executors[worker % executors.count]
                group.addTask(executorPreference: executor) {
                    var tally = Tally()
                    while true {
                        let ticket = tickets.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard ticket < plan.count else { break }
                        if let deadline, ContinuousClock.now >= deadline { break }
                        var due = ContinuousClock.now
                        if let rate = plan.rate {
                            due = start + .microseconds(Int(Double(ticket) / rate * 1e6))
                            // A request due after the end is not sent: each sender had sent
                            // one more after `-d` (trial OO: 84 requests in 8 s for 2 s at 10/s).
                            if let deadline, due >= deadline { break }
                            if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
                        }
                        let request = plan.requests[ticket % plan.requests.count]
                        do {
                            let response = try await client.perform(request)
                            tally.bytes += response.body.count
                            if !response.isSuccess {
                                tally.non2xxStatuses[response.status, default: 0] += 1
                            }
                            if let new = response.timings.newConnection {
                                tally.connectionsKnown = true
                                if new { tally.connections += 1 }
                            }
                        } catch let error as HTTPError {
                            tally.errors[error.kind.rawValue, default: 0] += 1
                        } catch {
                            tally.errors["other", default: 0] += 1
                        }
                        tally.latency.record(milliseconds: due.duration(to: .now).seconds * 1000)
                        tally.requests += 1
                        if tally.requests % 256 == 0 { progress?(ticket) }
                    }
                    return tally
                }
            }
            var total = Tally()
            for await tally in group { total.add(tally) }
            return total
        }
    }

    /// User plus system CPU time of this process so far.
    static func processCPUSeconds() -> Double {
        let usage = resourceUsage()
        func seconds(_ time: timeval) -> Double {
            Double(time.tv_sec) + Double(time.tv_usec) / 1e6
        }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The process's peak resident set size since ``resetPeakRSS()`` (Linux's `VmHWM`), or
    /// else since it started, in bytes.
    static func peakRSS() -> Int {
        #if canImport(Darwin)
            Int(resourceUsage().ru_maxrss)
        #else
            if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                return kib * 1024
            }
            return Int(resourceUsage().ru_maxrss) * 1024
        #endif
    }

    /// Lowers the peak `peakRSS()` reads to what the process holds now (Linux: writing 5 to
    /// `/proc/self/clear_refs`, proc(5)); elsewhere nothing can.
    static func resetPeakRSS() {
        #if os(Linux)
            let descriptor = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return }
            _ = write(descriptor, "5", 1)
            close(descriptor)
        #endif
    }

    private static func resourceUsage() -> rusage {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage
    }
}

/// The order of a benchmark's rounds: backends alternate, A B A B, so that a machine that gets
/// busier or quieter during the run weighs on every backend alike.
enum BenchSchedule {
    static func order(backends: [Backend], rounds: Int) -> [(round: Int, backend: Backend)] {
        (1...max(1, rounds)).flatMap { round in backends.map { (round, $0) } }
    }

    /// The median of the values (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
