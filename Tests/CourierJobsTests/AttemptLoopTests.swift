import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierJobs

/// A task's request loop (``AttemptLoop``) decides as the library's layers do, stacked as a run
/// stacked them before the loop replaced them: ``RetryingHTTPClient`` over
/// ``HostThrottlingHTTPClient`` over ``RedirectingHTTPClient``. Each scenario is a scripted
/// server on a manual clock, sent through both; the attempts each reports, what each sent, the
/// clock's sleeps, the host waits and the answer must be the same. (The runner's end-to-end
/// suites send through the loop against real servers; this pins the decisions.)
@Suite("AttemptLoop")
struct AttemptLoopTests {
    /// A server by script: each URL's responses in turn (status 0: the connection is refused),
    /// then 200s; every request it was sent, with its `traceparent`.
    final class Script: HTTPClient, @unchecked Sendable {
        private let lock = NSLock()
        private var script: [String: [(Int, HTTPHeaders)]]
        private var sent: [(url: String, traceparent: String?)] = []

        init(_ script: [String: [(Int, HTTPHeaders)]]) { self.script = script }

        var requests: [(url: String, traceparent: String?)] { lock.withLock { sent } }

        func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
            let (status, headers) = lock.withLock { () -> (Int, HTTPHeaders) in
                sent.append((request.url.absoluteString, request.headers["traceparent"]))
                let key = request.url.absoluteString
                guard let first = script[key]?.first else { return (200, [:]) }
                script[key]?.removeFirst()
                return first
            }
            if status == 0 { throw HTTPError(.connect, "refused", url: request.url) }
            return HTTPResponse(
                status: status, headers: headers, url: request.url,
                requestHeaders: request.headers)
        }
    }

    /// What one stack did with a scenario, to compare.
    struct Outcome: Equatable, CustomStringConvertible {
        var attempts: [String] = []
        var sent: [String] = []
        var sleeps: [Duration] = []
        var hostWaits: TimeInterval = 0
        var answer = ""

        var description: String {
            "attempts \(attempts)\nsent \(sent)\nsleeps \(sleeps)\nhost \(hostWaits)\n\(answer)"
        }
    }

    /// A finished attempt in words: number, status or error, delay, where it ended, hops.
    static func words(_ attempt: RetryAttempt) -> String {
        let delay = attempt.retryDelay.map { " retry in \($0)" } ?? " final"
        switch attempt.outcome {
        case .success(let response):
            return
                "\(attempt.number) \(response.status) \(response.url.absoluteString) hops \(response.redirectCount)\(delay) \(attempt.stopReason ?? "")"
        case .failure(let error):
            return "\(attempt.number) \(error.kind) \(error.message)\(delay)"
        }
    }

    static func answer(_ result: Result<HTTPResponse, any Error>) -> String {
        switch result {
        case .success(let response):
            let hops = response.redirectCount
            return "\(response.status) \(response.url.absoluteString) hops \(hops)"
        case .failure(let error as HTTPError):
            return "\(error.kind) \(error.message)"
        case .failure(let error):
            return "\(error)"
        }
    }

    /// `"http://…"` is a GET; `"POST http://…"` a POST, which is not retried.
    static func get(_ line: String) -> HTTPRequest {
        let words = line.split(separator: " ").map(String.init)
        var request = HTTPRequest(url: URL(string: words.last!)!)
        if words.count == 2 { request.method = HTTPMethod(rawValue: words[0]) }
        return request
    }

    static func result(_ body: () async throws -> HTTPResponse) async -> Result<
        HTTPResponse, any Error
    > {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    static let policy = RetryPolicy(maxAttempts: 4, initialDelay: 0.5, maxDelay: 30)

    /// The scenario's requests, in turn, through the library's layers.
    static func layered(_ script: [String: [(Int, HTTPHeaders)]], _ urls: [String]) async
        -> Outcome
    {
        let (time, server) = (ManualTimeSource(), Script(script))
        let hosts = HostThrottles(time: time)
        let seen = Locked(Outcome())
        let client = RetryingHTTPClient(
            wrapping: HostThrottlingHTTPClient(
                wrapping: RedirectingHTTPClient(wrapping: server), hosts: hosts,
                maxDelay: policy.maxDelay
            ) { seconds in seen.withLock { $0.hostWaits += seconds } },
            policy: policy, time: time, random: { 0.5 }, judge: nil
        ) { attempt in seen.withLock { $0.attempts.append(words(attempt)) } }
        for url in urls {
            let result = await Self.result { try await client.perform(Self.get(url)) }
            seen.withLock { $0.answer += answer(result) + "; " }
        }
        return seen.withLock { outcome in
            outcome.sent = server.requests.map(\.url)
            outcome.sleeps = time.sleeps
            return outcome
        }
    }

    /// The same through the loop.
    static func looped(_ script: [String: [(Int, HTTPHeaders)]], _ urls: [String]) async
        -> Outcome
    {
        let (time, server) = (ManualTimeSource(), Script(script))
        let hosts = HostThrottles(time: time)
        let seen = Locked(Outcome())
        let loop = AttemptLoop(
            shared: AnyHTTPClient(server), policy: policy, time: time, hosts: hosts, trace: nil,
            judge: nil, writeStart: nil, rateLimited: false, random: { 0.5 }
        ) { attempt, waits in
            seen.withLock {
                $0.attempts.append(words(attempt))
                $0.hostWaits += waits.host
            }
        }
        for url in urls {
            let result = await Self.result { try await loop.perform(Self.get(url)) }
            seen.withLock { $0.answer += answer(result) + "; " }
        }
        return seen.withLock { outcome in
            outcome.sent = server.requests.map(\.url)
            outcome.sleeps = time.sleeps
            return outcome
        }
    }

    static let scenarios: [(String, [String: [(Int, HTTPHeaders)]], [String])] = [
        (
            "a 503 with Retry-After, retried after the pause its host keeps too",
            ["http://a.test/x": [(503, ["Retry-After": "2"])]],
            ["http://a.test/x", "http://a.test/y"]
        ),
        (
            "a POST's 503 with Retry-After: not retried, and the host's next request waits",
            ["http://a.test/x": [(503, ["Retry-After": "2"])]],
            ["POST http://a.test/x", "http://a.test/y", "http://b.test/z"]
        ),
        (
            "a chain of redirects, relative and to another host",
            [
                "http://a.test/old": [(301, ["Location": "/mid"])],
                "http://a.test/mid": [(302, ["Location": "http://b.test/new"])],
            ],
            ["http://a.test/old"]
        ),
        (
            "a retry, then a redirect, then a refused connection and a retry",
            [
                "http://a.test/r": [(503, [:]), (307, ["Location": "/s"])],
                "http://a.test/s": [(0, [:])],
            ],
            ["http://a.test/r"]
        ),
        (
            "a redirect loop ends the attempt, and is not retried",
            [
                "http://a.test/p": [(302, ["Location": "/q"])],
                "http://a.test/q": [(302, ["Location": "/p"])],
            ],
            ["http://a.test/p"]
        ),
        (
            "a 429 asking for more than maxDelay: not retried, and the host's next request refused unsent",
            ["http://a.test/busy": [(429, ["Retry-After": "120"])]],
            ["http://a.test/busy", "http://a.test/other", "http://b.test/free"]
        ),
        (
            "a redirect's answer teaches the host that sent it",
            [
                "http://a.test/go": [(302, ["Location": "http://b.test/slow"])],
                "http://b.test/slow": [(503, ["Retry-After": "3"])],
            ],
            ["POST http://a.test/go", "http://b.test/next", "http://a.test/free"]
        ),
        (
            "connections refused until the attempts run out",
            ["http://a.test/down": [(0, [:]), (0, [:]), (0, [:]), (0, [:])]],
            ["http://a.test/down"]
        ),
    ]

    @Test("decides as the library's layers do", arguments: scenarios.indices)
    func decidesAsTheLayers(index: Int) async {
        let (name, script, urls) = Self.scenarios[index]
        let layers = await Self.layered(script, urls)
        let loop = await Self.looped(script, urls)
        #expect(loop == layers, "\(name)\n--- layers:\n\(layers)\n--- loop:\n\(loop)")
        #expect(!loop.attempts.isEmpty)
    }

    @Test("each attempt is a span of its own, sent on each of its hops and told with it")
    func eachAttemptIsASpan() async throws {
        let server = Script([
            "http://a.test/t": [(0, [:]), (503, [:]), (302, ["Location": "/u"])]
        ])
        let trace = TraceSettings(
            traceID: String(repeating: "ab", count: 16), parentSpanID: nil, flags: "01",
            state: nil, propagates: true)
        let told = Locked<[String?]>([])
        let loop = AttemptLoop(
            shared: AnyHTTPClient(server), policy: Self.policy, time: ManualTimeSource(),
            hosts: nil, trace: trace, judge: nil, writeStart: nil, rateLimited: false,
            random: { 0.5 }
        ) { attempt, _ in told.withLock { $0.append(attempt.request.headers["traceparent"]) } }
        let response = try await loop.perform(Self.get("http://a.test/t"))
        #expect(response.status == 200)
        let sent = server.requests
        #expect(
            sent.map(\.url) == Array(repeating: "http://a.test/t", count: 3) + ["http://a.test/u"])
        let spans = sent.map { $0.traceparent ?? "" }
        #expect(spans.allSatisfy { $0.hasPrefix("00-" + trace.traceID + "-") }, "\(spans)")
        #expect(Set(spans.prefix(3)).count == 3, "each retry is a span of its own")
        #expect(spans[2] == spans[3], "the redirect hop is in its attempt's span")
        // The observer is told each attempt with the span it was sent, the refused one too.
        #expect(told.withLock { $0 } == spans.prefix(3).map { Optional($0) })
        #expect(response.requestHeaders["traceparent"] == spans[2])
    }

    @Test("the rate limit's waits below go on the attempt, and out of its duration")
    func rateLimitWaitsAreTheAttempts() async throws {
        let time = ManualTimeSource()
        let limited = RateLimitingHTTPClient(
            wrapping: Script([:]), perSecond: 1, burst: 1, time: time)
        let waits = Locked<[AttemptWaits]>([])
        let loop = AttemptLoop(
            shared: AnyHTTPClient(limited), policy: Self.policy, time: time, hosts: nil,
            trace: nil, judge: nil, writeStart: nil, rateLimited: true, random: { 0.5 }
        ) { attempt, waited in
            waits.withLock { $0.append(waited) }
            #expect(attempt.duration == 0, "the manual clock moved only in the wait")
        }
        for _ in 0..<3 {
            _ = try await loop.perform(HTTPRequest(url: URL(string: "http://a.test/r")!))
        }
        #expect(waits.withLock { $0.map(\.rateLimit) } == [0, 1, 1])
        #expect(time.sleeps == [.seconds(1), .seconds(1)])
    }

    /// A redirect hop's wait comes after the attempt's request went out: the line's `ts` is
    /// the first hop's hand-off (trial O: it followed it), `blockedMs` every hop's wait.
    @Test("a redirect hop's rate-limit wait is not before the request went out")
    func redirectHopWaitsComeAfterTheSend() async throws {
        let time = ManualTimeSource()
        let server = Script(["http://a.test/r": [(302, ["Location": "/s"])]])
        let limited = RateLimitingHTTPClient(wrapping: server, perSecond: 1, burst: 1, time: time)
        let waits = Locked<[AttemptWaits]>([])
        let loop = AttemptLoop(
            shared: AnyHTTPClient(limited), policy: Self.policy, time: time, hosts: nil,
            trace: nil, judge: nil, writeStart: nil, rateLimited: true, random: { 0.5 }
        ) { _, waited in waits.withLock { $0.append(waited) } }
        let response = try await loop.perform(Self.get("http://a.test/r"))
        #expect(response.redirectCount == 1)
        let waited = try #require(waits.withLock { $0 }.first)
        #expect(waited.rateLimit == 1 && waited.total == 1)
        #expect(waited.beforeSent == 0, "the first hop took the burst's token: \(waited)")
        // Without redirects, every wait came before the request went out.
        #expect(AttemptWaits(host: 2, rateLimit: 1).beforeSent == 3)
    }

    /// A clock whose `n`th wait is cut, as a run's stop cuts one.
    final class CutTime: TimeSource, @unchecked Sendable {
        let base = ManualTimeSource()
        let cut: Int
        private let count = Locked(0)
        init(cutting cut: Int) { self.cut = cut }
        func now() -> ContinuousClock.Instant { base.now() }
        func date() -> Date { base.date() }
        func sleep(for duration: Duration) async throws {
            let n = count.withLock { count in
                count += 1
                return count
            }
            if n == cut { throw CancellationError() }
            try await base.sleep(for: duration)
        }
    }

    /// The line a cut retry wait adds says again the attempt before it, stamped as that
    /// attempt's own line was, when its request went out (trial P: it was stamped before,
    /// at the attempt's start, as if it had waited for nothing).
    @Test("the line of a cut retry wait is stamped as the attempt it repeats")
    func aCutRetryWaitRepeatsTheAttemptsStamp() async throws {
        let time = CutTime(cutting: 2)
        let server = Script(["http://a.test/r": [(503, [:])]])
        let limited = RateLimitingHTTPClient(wrapping: server, perSecond: 1, burst: 1, time: time)
        let told = Locked<[(Int, String, AttemptWaits)]>([])
        let loop = AttemptLoop(
            shared: AnyHTTPClient(limited), policy: Self.policy, time: time, hosts: nil,
            trace: nil, judge: nil, writeStart: nil, rateLimited: true, random: { 0.5 }
        ) { attempt, waited in
            told.withLock { $0.append((attempt.number, attempt.stopReason ?? "", waited)) }
        }
        _ = try await loop.perform(HTTPRequest(url: URL(string: "http://a.test/first")!))
        await #expect(throws: HTTPError.self) {
            try await loop.perform(HTTPRequest(url: URL(string: "http://a.test/r")!))
        }
        let lines = told.withLock { $0 }
        #expect(lines.count == 3, "\(lines)")
        let (retried, repeated) = (lines[1], lines[2])
        #expect(retried.0 == 1 && repeated.0 == 1)
        #expect(repeated.1 == CancelledWait.retry.rawValue)
        #expect(retried.2.beforeSent == 1, "it waited a second for its token: \(retried.2)")
        #expect(repeated.2.beforeSent == retried.2.beforeSent, "\(repeated.2)")
        #expect(repeated.2.total == 0, "its waits are told once, on the attempt's own line")
    }
}
