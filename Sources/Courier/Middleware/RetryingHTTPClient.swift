import Foundation

/// Sends a request again after transient failures, as a ``RetryPolicy`` decides.
///
/// ```swift
/// let client = RetryingHTTPClient(wrapping: transport, policy: RetryPolicy(maxAttempts: 4))
/// ```
/// An observer sees every attempt with the decision taken, which is how the job runner writes
/// one log line per attempt.
public struct RetryingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public typealias Attempt = RetryAttempt

    public let wrapped: Wrapped
    public let policy: RetryPolicy
    private let time: any TimeSource
    private let observer: (@Sendable (Attempt) -> Void)?
    private let random: @Sendable () -> Double
    private let judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?

    /// - Parameter check: whether a response (and how long it took, in seconds) is what the
    ///   caller wants; a refused one is retried only when the policy
    ///   ``RetryPolicy/retriesOnExpectation``, which is how polling is written.
    public init(
        wrapping wrapped: Wrapped, policy: RetryPolicy = RetryPolicy(),
        time: any TimeSource = SystemTimeSource(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        check: (@Sendable (HTTPResponse, TimeInterval) -> Bool)? = nil,
        observer: (@Sendable (Attempt) -> Void)? = nil
    ) {
        var judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?
        if let check {
            judge = { response, seconds in check(response, seconds) ? .usual : .unmet }
        }
        self.init(
            wrapping: wrapped, policy: policy, time: time, random: random, judge: judge,
            observer: observer)
    }

    /// - Parameter judge: what the caller makes of a response (and how long it took, in
    ///   seconds), beside its status (``RetryPolicy/ResponseVerdict``): a response to send
    ///   again whatever its status, one to take as it is, one that misses an expectation.
    public init(
        wrapping wrapped: Wrapped, policy: RetryPolicy, time: any TimeSource = SystemTimeSource(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        judge: (@Sendable (HTTPResponse, TimeInterval) -> RetryPolicy.ResponseVerdict)?,
        observer: (@Sendable (Attempt) -> Void)? = nil
    ) {
        self.wrapped = wrapped
        self.policy = policy
        self.time = time
        self.random = random
        self.judge = judge
        self.observer = observer
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        // What the loop keeps across its awaits is in one object, and the work between the
        // awaits in synchronous helpers: what an async function holds lives in the task's heap
        // frame for as long as the request is in flight. Written inline the frame was 6 KiB;
        // with each attempt's values held in it, 3.5 KiB; as now, 2 KiB (the binary's async
        // function pointer gives it, docs/benchmarks.md).
        let attempts = Attempts()
        while true {
            let sent = begin(request, attempts)
            let outcome: Result<HTTPResponse, HTTPError>
            do {
                outcome = .success(try await wrapped.perform(sent))
            } catch let error as HTTPError {
                outcome = .failure(error)
            }
            guard let delay = settle(outcome, of: request, attempts) else {
                return try attempts.answer()
            }
            do {
                try await time.sleep(for: .milliseconds(Int64((delay * 1000).rounded())))
            } catch {
                throw cancelledWhileWaiting(after: attempts)
            }
            attempts.number += 1
        }
    }

    /// One ``perform(_:)`` call's attempts so far: owned by the task that runs it.
    private final class Attempts {
        /// 1 for the first try.
        var number = 1
        var started = Date()
        var clockStart = ContinuousClock.now
        /// A streamed attempt's channel, which says whether its head reached the reader.
        var channel: BodyChunkChannel?
        /// The attempt that ended last.
        var last: RetryAttempt?

        /// The last attempt's response, or its error.
        func answer() throws(HTTPError) -> HTTPResponse {
            guard let last else { throw HTTPError(.cancelled, "no attempt was made", url: nil) }
            return try last.outcome.get()
        }
    }

    /// Starts the next attempt: its clocks, and the request it sends.
    @inline(never)
    private func begin(_ request: HTTPRequest, _ attempts: Attempts) -> HTTPRequest {
        attempts.started = time.date()
        attempts.clockStart = time.now()
        let (sent, channel) = RetryAttempt.request(
            request, number: attempts.number, policy: policy, time: time)
        attempts.channel = channel
        return sent
    }

    /// Decides what follows an attempt and tells the observer; a `final` attempt (its
    /// streamed head reached the reader) is never retried.
    @inline(never)
    private func settle(
        _ outcome: Result<HTTPResponse, HTTPError>, of request: HTTPRequest, _ attempts: Attempts
    ) -> TimeInterval? {
        let number = attempts.number
        let final = attempts.channel?.reachedReader == true
        let duration = attempts.clockStart.duration(to: time.now()).seconds
        var verdict = RetryPolicy.ResponseVerdict.usual
        if let judge, case .success(let response) = outcome {
            verdict = judge(response, duration)
        }
        let attempt = Attempt.settled(
            request, number: number, outcome: outcome, verdict: verdict, final: final,
            policy: policy, time: time, random: random, duration: duration,
            started: attempts.started)
        observer?(attempt)
        attempts.last = attempt
        return attempt.retryDelay
    }

    /// The wait before a retry was cut short: the attempt just reported is the last one after
    /// all, and the observer hears so, so that every task ends with a final word.
    @inline(never)
    private func cancelledWhileWaiting(after attempts: Attempts) -> HTTPError {
        guard let last = attempts.last else {
            return CancelledWait.retry.error(url: nil)
        }
        let (final, error) = last.cancelledWhileWaiting()
        observer?(final)
        return error
    }
}

/// One finished attempt and what happens next.
public struct RetryAttempt: Sendable {
    public var request: HTTPRequest
    /// 1 for the first try.
    public var number: Int
    public var outcome: Result<HTTPResponse, HTTPError>
    /// The wait before the next attempt, or `nil` when this attempt is the last.
    public var retryDelay: TimeInterval?
    /// Wall time of the attempt.
    public var duration: TimeInterval
    /// When the attempt started.
    public var started: Date
    /// Why no retry follows where one could have (see ``RetryPolicy/Decision``).
    public var stopReason: String?

    public init(
        request: HTTPRequest, number: Int, outcome: Result<HTTPResponse, HTTPError>,
        retryDelay: TimeInterval?, duration: TimeInterval, started: Date, stopReason: String? = nil
    ) {
        self.request = request
        self.number = number
        self.outcome = outcome
        self.retryDelay = retryDelay
        self.duration = duration
        self.started = started
        self.stopReason = stopReason
    }
}
