import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends one URL many times through an ``HTTPClient`` with a fixed number in flight, and
/// measures throughput and CPU time. Timings are for a benchmark run, never for a test verdict.
public struct BenchmarkRunner: Sendable {
    /// What to run.
    public struct Plan: Sendable {
        public var url: URL
        public var requests: Int
        public var concurrency: Int
        /// Requests sent before measuring, to open connections and warm caches.
        public var warmup: Int

        public init(url: URL, requests: Int, concurrency: Int, warmup: Int = 0) {
            self.url = url
            self.requests = requests
            self.concurrency = concurrency
            self.warmup = warmup
        }
    }

    /// What one run measured.
    public struct Result: Sendable, Codable {
        public var backend: String
        public var requests: Int
        public var concurrency: Int
        public var errors: Int
        public var non2xx: Int
        public var bytes: Int
        public var seconds: Double
        public var cpuSeconds: Double

        public var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
        public var cpuMicrosecondsPerRequest: Double {
            requests > 0 ? cpuSeconds / Double(requests) * 1e6 : 0
        }
    }

    public let backend: String
    public let client: any HTTPClient

    public init(backend: String, client: any HTTPClient) {
        self.backend = backend
        self.client = client
    }

    public func run(_ plan: Plan) async -> Result {
        if plan.warmup > 0 {
            _ = await send(count: plan.warmup, concurrency: plan.concurrency, url: plan.url)
        }
        let cpuBefore = Self.processCPUSeconds()
        let started = ContinuousClock.now
        let tally = await send(count: plan.requests, concurrency: plan.concurrency, url: plan.url)
        let elapsed = started.duration(to: .now).seconds
        return Result(
            backend: backend, requests: plan.requests, concurrency: plan.concurrency,
            errors: tally.errors, non2xx: tally.non2xx, bytes: tally.bytes, seconds: elapsed,
            cpuSeconds: Self.processCPUSeconds() - cpuBefore)
    }

    private struct Tally: Sendable {
        var errors = 0
        var non2xx = 0
        var bytes = 0
        static func + (lhs: Tally, rhs: Tally) -> Tally {
            Tally(
                errors: lhs.errors + rhs.errors, non2xx: lhs.non2xx + rhs.non2xx,
                bytes: lhs.bytes + rhs.bytes)
        }
    }

    private func send(count: Int, concurrency: Int, url: URL) async -> Tally {
        let client = self.client
        let workers = max(1, min(concurrency, count))
        return await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<workers {
                // Spread the requests evenly: the first `count % workers` workers take one more.
                let share = count / workers + (worker < count % workers ? 1 : 0)
                group.addTask {
                    var tally = Tally()
                    let request = HTTPRequest(url: url)
                    for _ in 0..<share {
                        do {
                            let response = try await client.perform(request)
                            tally.bytes += response.body.count
                            if !response.isSuccess { tally.non2xx += 1 }
                        } catch {
                            tally.errors += 1
                        }
                    }
                    return tally
                }
            }
            return await group.reduce(Tally(), +)
        }
    }

    /// User plus system CPU time of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double {
            Double(time.tv_sec) + Double(time.tv_usec) / 1e6
        }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
