import Courier
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

@Suite struct RetryPolicyTests {
    let get = HTTPRequest(url: URL(string: "http://a.test/")!)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ status: Int, _ headers: HTTPHeaders = [:]) -> Result<HTTPResponse, HTTPError> {
        .success(HTTPResponse(status: status, headers: headers, url: get.url))
    }

    @Test func backoffIsExponentialCappedAndFullyJittered() {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: 0.5, multiplier: 2, maxDelay: 3)
        #expect(policy.backoff(afterAttempt: 1, random: 1) == 0.5)
        #expect(policy.backoff(afterAttempt: 2, random: 1) == 1)
        #expect(policy.backoff(afterAttempt: 3, random: 1) == 2)
        #expect(policy.backoff(afterAttempt: 4, random: 1) == 3, "capped by maxDelay")
        #expect(
            policy.backoff(afterAttempt: 3, random: 0.25) == 0.5,
            "full jitter scales the whole wait")
        var noJitter = policy
        noJitter.jitter = false
        #expect(noJitter.backoff(afterAttempt: 3, random: 0.25) == 2)
    }

    @Test func retriesOnlyListedStatusesAndStopsAtMaxAttempts() {
        let policy = RetryPolicy(maxAttempts: 3, jitter: false)
        #expect(
            policy.delay(after: 1, request: get, outcome: response(503), now: now, random: 0) == 0.5
        )
        #expect(
            policy.delay(after: 1, request: get, outcome: response(404), now: now, random: 0) == nil
        )
        #expect(
            policy.delay(after: 3, request: get, outcome: response(503), now: now, random: 0) == nil
        )
    }

    @Test func aCallersVerdictOverridesTheStatusRules() {
        let policy = RetryPolicy(maxAttempts: 3, jitter: false)
        func decide(
            _ outcome: Result<HTTPResponse, HTTPError>, _ verdict: RetryPolicy.ResponseVerdict,
            request: HTTPRequest? = nil, attempt: Int = 1
        ) -> RetryPolicy.Decision {
            policy.decide(
                after: attempt, request: request ?? get, outcome: outcome, verdict: verdict,
                now: now, random: 0)
        }
        #expect(decide(response(200), .retry).delay == 0.5, "a 200 the caller wants again")
        #expect(decide(response(503), .final).delay == nil, "a 503 the caller takes as it is")
        #expect(decide(response(503), .usual).delay == 0.5)
        #expect(decide(response(200), .unmet).delay == nil, "polling is off by default")
        var post = get
        post.method = .post
        #expect(decide(response(503), .usual, request: post).delay == nil)
        #expect(decide(response(200), .retry, request: post).delay == 0.5, "asked for by name")
        #expect(decide(response(200), .retry, attempt: 3).delay == nil, "within maxAttempts")
        let waited = decide(response(200, ["Retry-After": "2"]), .retry)
        #expect(waited.delay == 2, "a Retry-After paces a retry the caller asked for")
        let tooLong = decide(response(200, ["Retry-After": "3600"]), .retry)
        #expect(tooLong.delay == nil && tooLong.stopReason?.contains("3600 s") == true)
        #expect(
            decide(.failure(HTTPError(.timeout, "slow", url: get.url)), .final).delay == 0.5,
            "a verdict is on responses; a transport error is retried as usual")
    }

    @Test func nonIdempotentMethodsNeedPermissionOrAnIdempotencyKey() {
        let policy = RetryPolicy(jitter: false)
        var post = HTTPRequest(url: get.url, method: .post)
        #expect(
            policy.delay(after: 1, request: post, outcome: response(503), now: now, random: 0)
                == nil)
        post.headers["Idempotency-Key"] = "k1"
        #expect(
            policy.delay(after: 1, request: post, outcome: response(503), now: now, random: 0)
                == 0.5)
        var allowing = policy
        allowing.retriesNonIdempotent = true
        let patch = HTTPRequest(url: get.url, method: .patch)
        #expect(
            allowing.delay(after: 1, request: patch, outcome: response(503), now: now, random: 0)
                == 0.5)
    }

    @Test func networkErrorsButNeverCancellation() {
        let policy = RetryPolicy(jitter: false)
        let refused = Result<HTTPResponse, HTTPError>.failure(HTTPError(.connect, "refused"))
        let cancelled = Result<HTTPResponse, HTTPError>.failure(HTTPError(.cancelled, "stop"))
        #expect(policy.delay(after: 1, request: get, outcome: refused, now: now, random: 0) == 0.5)
        #expect(
            policy.delay(after: 1, request: get, outcome: cancelled, now: now, random: 0) == nil)
        var off = policy
        off.retriesNetworkErrors = false
        #expect(off.delay(after: 1, request: get, outcome: refused, now: now, random: 0) == nil)
    }

    @Test func retryAfterInSecondsAndAsDateIsHonouredAndNeverShortened() {
        let policy = RetryPolicy(maxDelay: 30)
        let seconds = response(429, ["Retry-After": "7"])
        #expect(policy.delay(after: 1, request: get, outcome: seconds, now: now, random: 0) == 7)
        let date = response(503, ["Retry-After": "Fri, 15 Jan 2027 08:00:12 GMT"])
        let base = RetryAfterTests.date("Fri, 15 Jan 2027 08:00:00 GMT")
        #expect(policy.delay(after: 1, request: get, outcome: date, now: base, random: 0) == 12)
        let far = response(429, ["Retry-After": "3600"])
        let stop = policy.decide(after: 1, request: get, outcome: far, now: now, random: 0)
        #expect(stop.delay == nil, "coming back after 30 s would be before the server allowed")
        #expect(stop.stopReason == "the server asked to wait 3600 s, more than maxDelay 30 s")
        var ignoring = policy
        ignoring.respectsRetryAfter = false
        ignoring.jitter = false
        #expect(
            ignoring.delay(after: 1, request: get, outcome: seconds, now: now, random: 0) == 0.5)
    }

    @Test func retryingClientReportsEveryAttemptAndSleepsTheDecidedTime() async throws {
        let time = ManualTimeSource()
        let stub = CountingClient(statuses: [503, 0, 200])
        let attempts = AttemptLog()
        let client = RetryingHTTPClient(
            wrapping: stub, policy: RetryPolicy(maxAttempts: 5, initialDelay: 1, jitter: false),
            time: time, observer: { attempts.append($0) })
        let response = try await client.perform(get)
        #expect(response.status == 200)
        #expect(attempts.numbers == [1, 2, 3])
        #expect(attempts.delays == [1, 2, nil])
        #expect(time.sleeps == [.seconds(1), .seconds(2)])
    }

    @Test func retryingClientThrowsTheLastErrorWhenAttemptsRunOut() async throws {
        let client = RetryingHTTPClient(
            wrapping: CountingClient(statuses: [0]), policy: RetryPolicy(maxAttempts: 2),
            time: ManualTimeSource())
        let error = try await #require(throws: HTTPError.self) { try await client.perform(get) }
        #expect(error.kind == .connect)
    }
}

@Suite struct RetryAfterTests {
    static func date(_ text: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)!
    }

    @Test func bothForms() {
        let now = Self.date("Fri, 15 Jan 2027 08:00:00 GMT")
        #expect(RetryAfter.seconds(from: "120", now: now) == 120)
        #expect(RetryAfter.seconds(from: " 5 ", now: now) == 5)
        #expect(RetryAfter.seconds(from: "Fri, 15 Jan 2027 08:01:00 GMT", now: now) == 60)
        #expect(RetryAfter.seconds(from: "Friday, 15-Jan-27 08:00:30 GMT", now: now) == 30)
        #expect(
            RetryAfter.seconds(from: "Fri, 15 Jan 2027 07:00:00 GMT", now: now) == 0,
            "a past date means now")
        #expect(RetryAfter.seconds(from: "-3", now: now) == nil)
        #expect(RetryAfter.seconds(from: "soon", now: now) == nil)
        // Digits past Int's range are a very long wait, which ends the retries (trial GG:
        // 2^63 was read as no Retry-After, and the request went again at once).
        for huge in ["9223372036854775808", "99999999999999999999999"] {
            let seconds = RetryAfter.seconds(from: huge, now: now)
            #expect((seconds ?? 0) > 1e18, "\(huge)")
            let request = HTTPRequest(url: URL(string: "http://h.example/")!)
            let answer = HTTPResponse(
                status: 429, headers: ["Retry-After": huge], body: Data(), url: request.url)
            #expect(
                RetryPolicy().delay(
                    after: 1, request: request, outcome: .success(answer), now: now, random: 0)
                    == nil, "more than maxDelay: the retries end")
        }
    }
}

/// Collects what a RetryingHTTPClient observer sees.
final class AttemptLog: @unchecked Sendable {
    private let lock = NSLock()
    private var attempts: [RetryAttempt] = []
    func append(_ attempt: RetryAttempt) {
        lock.withLock { attempts.append(attempt) }
    }
    var numbers: [Int] { lock.withLock { attempts.map(\.number) } }
    var delays: [TimeInterval?] { lock.withLock { attempts.map(\.retryDelay) } }

    @Test(arguments: [
        HTTPError.Kind.cancelled, .invalidURL, .invalidRequest, .tls, .dns, .bodyTooLarge, .file,
        .unsupported,
        .tooManyRedirects, .throttled,
    ])
    func permanentFailuresAreNeverRetried(kind: HTTPError.Kind) {
        let policy = RetryPolicy(maxAttempts: 5)
        let outcome = Result<HTTPResponse, HTTPError>.failure(HTTPError(kind, "x"))
        let request = HTTPRequest(url: URL(string: "http://a.test/")!)
        #expect(
            policy.delay(after: 1, request: request, outcome: outcome, now: Date(), random: 0)
                == nil)
    }
}
