import Foundation

/// When and how long to wait before trying a request again: a pure value, so every decision can
/// be tested without a clock or a network.
///
/// Backoff is exponential with "full jitter": attempt *n* waits a random time between 0 and
/// `min(maxDelay, initialDelay × multiplier^(n-1))`. A `Retry-After` header, when respected,
/// replaces that wait; one longer than `maxDelay` ends the retries instead.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (1 means never retry).
    public var maxAttempts: Int
    /// Seconds before the first retry (before jitter).
    public var initialDelay: TimeInterval
    public var multiplier: Double
    /// The longest wait in seconds, for backoff and `Retry-After` alike.
    public var maxDelay: TimeInterval
    public var jitter: Bool
    /// Statuses that are worth another try.
    public var retryableStatuses: Set<Int>
    public var retriesNetworkErrors: Bool
    public var respectsRetryAfter: Bool
    /// Retry POST, PATCH and other non-idempotent methods too. Requests that carry an
    /// `Idempotency-Key` header are retried regardless.
    public var retriesNonIdempotent: Bool
    /// Retry a response with an accepted status that the caller's check refused (polling an
    /// asynchronous API until a field flips). Off by default.
    public var retriesOnExpectation = false

    public init(
        maxAttempts: Int = 3,
        initialDelay: TimeInterval = 0.5,
        multiplier: Double = 2,
        maxDelay: TimeInterval = 30,
        jitter: Bool = true,
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retriesNetworkErrors: Bool = true,
        respectsRetryAfter: Bool = true,
        retriesNonIdempotent: Bool = false
    ) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.retryableStatuses = retryableStatuses
        self.retriesNetworkErrors = retriesNetworkErrors
        self.respectsRetryAfter = respectsRetryAfter
        self.retriesNonIdempotent = retriesNonIdempotent
    }

    /// Never retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Whether the request may be sent again at all.
    public func allowsRetry(of request: HTTPRequest) -> Bool {
        request.isRepeatable || retriesNonIdempotent
    }

    /// The wait before attempt `attempt + 1`, given a random number in `0..<1` for the jitter.
    public func backoff(afterAttempt attempt: Int, random: Double) -> TimeInterval {
        let exponent = Double(max(0, attempt - 1))
        let ceiling = min(maxDelay, initialDelay * pow(multiplier, exponent))
        return jitter ? ceiling * random : ceiling
    }

    /// Transport failures that another try cannot change: the request, the certificate, the
    /// name, the body size, a body file that cannot be written (a full disk is not emptied by
    /// downloading again) and what the transport supports stay what they were, and a
    /// cancellation is the caller's decision.
    /// (`.dns` is here because libcurl reports a name that does not exist and a resolver that
    /// failed for now alike.) A `.throttled` request was refused because its host's gate would
    /// hold it longer than `maxDelay`: like a `Retry-After` beyond `maxDelay`, the task ends.
    public static let permanentFailures: Set<HTTPError.Kind> = [
        .cancelled, .invalidURL, .invalidRequest, .tls, .dns, .bodyTooLarge, .tooManyRedirects,
        .file, .unsupported, .throttled,
    ]

    /// What to do after an attempt: wait and try again, or stop, with why when the reason is
    /// not plain from the outcome.
    public struct Decision: Sendable, Hashable {
        /// The wait before the next attempt, or `nil` to stop.
        public var delay: TimeInterval?
        /// Why the policy stopped where it could have retried (a `Retry-After` longer than
        /// `maxDelay`).
        public var stopReason: String?

        public static func retry(after delay: TimeInterval) -> Decision { Decision(delay: delay) }
        public static let stop = Decision(delay: nil)
    }

    /// What to do after `attempt` (1-based) ended with `outcome`: `nil` to stop, or the wait
    /// before the next attempt. `now` dates an HTTP-date `Retry-After`.
    public func delay(
        after attempt: Int, request: HTTPRequest, outcome: Result<HTTPResponse, HTTPError>,
        now: Date, random: Double
    ) -> TimeInterval? {
        decide(after: attempt, request: request, outcome: outcome, now: now, random: random).delay
    }

    /// What the caller made of a response, beside its status: how the retry decision
    /// takes it.
    public enum ResponseVerdict: Sendable, Hashable {
        /// Judged by its status, as the policy says.
        case usual
        /// Its status is right but the caller's expectation is not met: retried only with
        /// ``RetryPolicy/retriesOnExpectation``.
        case unmet
        /// The caller asks for another try whatever the status and the method (a 200 whose
        /// body says "try again"), paced like any retry and within ``maxAttempts``.
        case retry
        /// The caller takes the response as it is: never retried, whatever its status.
        case final
    }

    /// The full decision after `attempt` (1-based) ended with `outcome`.
    ///
    /// A `Retry-After` longer than `maxDelay` stops the retries: coming back before the server
    /// allowed would only be refused again, so the task ends and says so.
    ///
    /// `unmetExpectation` says the caller's check refused a response: it is retried only with
    /// ``retriesOnExpectation``.
    public func decide(
        after attempt: Int, request: HTTPRequest, outcome: Result<HTTPResponse, HTTPError>,
        unmetExpectation: Bool = false, now: Date, random: @autoclosure () -> Double
    ) -> Decision {
        decide(
            after: attempt, request: request, outcome: outcome,
            verdict: unmetExpectation ? .unmet : .usual, now: now, random: random())
    }

    /// The full decision after `attempt` (1-based) ended with `outcome`, the caller's
    /// `verdict` on a response taken into account (``ResponseVerdict``).
    public func decide(
        after attempt: Int, request: HTTPRequest, outcome: Result<HTTPResponse, HTTPError>,
        verdict: ResponseVerdict, now: Date, random: @autoclosure () -> Double
    ) -> Decision {
        guard attempt < maxAttempts, allowsRetry(of: request) || verdict == .retry else {
            return .stop
        }
        switch outcome {
        case .success where verdict == .final:
            return .stop
        case .success where verdict == .unmet:
            guard retriesOnExpectation else { return .stop }
        case .success(let response):
            guard verdict == .retry || retryableStatuses.contains(response.status) else {
                return .stop
            }
            if let decision = retryAfter(response, now: now) { return decision }
        case .failure(let error):
            guard retriesNetworkErrors, !Self.permanentFailures.contains(error.kind) else {
                return .stop
            }
        }
        // The random number is drawn only here: most attempts succeed and need none.
        return .retry(after: backoff(afterAttempt: attempt, random: random()))
    }

    /// The wait a response's `Retry-After` asks for, when it is respected: a retry after it,
    /// or a stop when it is longer than `maxDelay`; `nil` when there is none to respect.
    private func retryAfter(_ response: HTTPResponse, now: Date) -> Decision? {
        guard respectsRetryAfter, let header = response.headers["Retry-After"],
            let wait = RetryAfter.seconds(from: header, now: now)
        else { return nil }
        guard wait <= maxDelay else {
            return Decision(
                delay: nil,
                stopReason:
                    "the server asked to wait \(Self.seconds(wait)) s, more than maxDelay \(Self.seconds(maxDelay)) s"
            )
        }
        return .retry(after: wait)
    }

    private static func seconds(_ value: TimeInterval) -> String {
        WholeNumberText.of(value)
    }
}

/// Reads a `Retry-After` value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
public enum RetryAfter {
    /// The wait in seconds, never negative, or `nil` when the value is neither form.
    public static func seconds(from value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        // Delay-seconds is any run of digits: one past Int's range is a very long wait, not
        // no `Retry-After` at all (trial GG: 2^63 was retried at once, the host not paused).
        if !trimmed.isEmpty,
            trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        {
            return TimeInterval(Int.max)
        }
        for format in formats {
            if let date = formatter(format).date(from: trimmed) {
                return max(0, date.timeIntervalSince(now))
            }
        }
        return nil
    }

    // IMF-fixdate first; RFC 850 and asctime are obsolete but still allowed to be read.
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}
