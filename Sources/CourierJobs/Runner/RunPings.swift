import Courier
import Foundation

/// A run's dead man's switch pings (`notify`, `courier run --ping-url`): one when it starts, one
/// when it ends with its exit code, each a POST whose body is a line about the run.
///
/// Pings go over a client of the job's own backend with its `tls` and `http2` settings (not
/// the job's rate limit, cookies, redirects or retry policy: a ping is not a task). Each one
/// has ``NotifySettings/timeout`` in all, retries included (``PingRetry``), and is abandoned
/// at that bound whatever its transport does; a ping never changes the run's exit code. The
/// start ping runs beside the tasks; when the run ends first, the end waits for it (within its
/// own bound), then the end's ping goes out, so the run's end waits at most two pings'
/// timeouts.
///
/// A ping URL is a secret (it holds the check's key): it is in no log line, message or
/// output, and the run's redactor knows it (``NotifySettings/secrets``).
final class RunPings: Sendable {
    let settings: NotifySettings
    let client: any HTTPClient
    let tls: TLSOptions
    let console: Console
    let job: String
    private let startPing = Locked<Task<Void, Never>?>(nil)

    init(
        settings: NotifySettings, job: String, backend: Backend, tls: TLSOptions = TLSOptions(),
        http2: Bool = false, console: Console
    ) {
        self.settings = settings
        self.job = job
        self.tls = tls
        self.console = console
        // One loop thread and a small body cap: a ping answers "OK".
        client = backend.makeClient(
            timeout: settings.timeout, maxResponseBytes: 1 << 20, maxConnectionsPerHost: 2,
            http2: http2, eventLoops: 1)
    }

    /// Sends the start ping in the background; its line goes to `log` when it is done.
    func started(body: String, log: RunLog?) {
        guard settings.url(for: .start) != nil else { return }
        let task = Task {
            let result = await self.send(.start, exitCode: nil, body: body)
            self.report(result, log: log)
        }
        startPing.withLock { $0 = task }
    }

    /// Waits for a start ping still going (it ends by its own bound,
    /// ``NotifySettings/timeout``), then sends the end's ping for `exitCode` and waits for it,
    /// at most the same.
    func ended(exitCode: Int32, body: String, log: RunLog?) async {
        if let start = startPing.withLock({ $0 }) {
            // A quick job ends before its start ping is answered: without its /start the check
            // measures no duration, and /start must come before the end's ping. A second more
            // was too little on a loaded machine (the ping was cut short, and warned of); the
            // ping's own bound is the bound.
            await start.value
        }
        let event = NotifySettings.event(forExitCode: exitCode)
        guard settings.url(for: event, exitCode: exitCode) != nil else { return }
        report(await send(event, exitCode: exitCode, body: body), log: log)
    }

    private func report(_ result: PingResult, log: RunLog?) {
        try? log?.ping(result)
        if let warning = result.warning(job: job) { console.error(warning) }
    }

    /// One ping, its retries included, within the settings' timeout.
    func send(_ event: NotifySettings.Event, exitCode: Int32?, body: String) async -> PingResult {
        let started = Date()
        let clock = ContinuousClock()
        let began = clock.now
        var result = PingResult(event: event, exitCode: exitCode, started: started)
        guard let url = settings.url(for: event, exitCode: exitCode ?? 0) else {
            result.failure = ("invalidURL", "the ping URL is not an http or https URL")
            return result
        }
        var request = HTTPRequest(
            url: url, method: .post, headers: ["Content-Type": "text/plain; charset=utf-8"],
            body: Data(body.utf8))
        request.tls = tls
        let progress = Locked(result)
        let retry = PingRetry(budget: settings.timeout, retries: NotifySettings.retries)
        let finished: Void? = await Deadline.within(settings.timeout) { [client, request] in
            await Self.attempts(request, client: client, retry: retry, progress: progress)
        }
        result = progress.withLock { $0 }
        result.duration = began.duration(to: clock.now).seconds
        if finished == nil {
            // The bound, or the run's end (for the start ping), cut it short.
            if Task.isCancelled, event == .start {
                // Cut short while an attempt was simply under way: no warning, the end's ping
                // follows. Cut short between attempts that had failed: that failure is the
                // news (a check that refuses connections), so it is kept and warned of.
                if let earlier = result.failure {
                    result.failure = (
                        earlier.kind,
                        earlier.message + "; the run ended before another attempt was answered"
                    )
                } else {
                    result.failure = ("cancelled", "the run ended before the ping was answered")
                    result.superseded = true
                }
            } else {
                let before = result.failure.map { "; before that, \($0.kind): \($0.message)" }
                result.failure = (
                    "timeout",
                    "no answer within \(PrometheusText.number(settings.timeout)) s (notify.timeout)"
                        + (before ?? "")
                )
            }
        }
        return result
    }

    /// Attempts until one is answered 2xx, the failure is not worth another, or
    /// ``PingRetry`` says the time left is too short; each one's outcome goes to `progress`.
    private static func attempts(
        _ request: HTTPRequest, client: any HTTPClient, retry: PingRetry,
        progress: Locked<PingResult>
    ) async {
        let clock = ContinuousClock()
        let began = clock.now
        var number = 0
        while !Task.isCancelled {
            number += 1
            var request = request
            let elapsed = began.duration(to: clock.now).seconds
            // A second past the bound: ``Deadline`` ends the ping at the bound itself, so that
            // its message is the same whichever transport; this is the transport's backstop.
            request.timeout = max(0.1, retry.budget - elapsed) + 1
            progress.withLock { $0.attempts = number }
            var status: Int?
            do {
                let response = try await client.perform(request)
                status = response.status
                progress.withLock {
                    $0.status = response.status
                    $0.failure =
                        response.isSuccess
                        ? nil : ("status", "answered \(response.status), not 2xx")
                }
                if response.isSuccess { return }
            } catch {
                let failure = error as? HTTPError
                progress.withLock {
                    $0.failure = (
                        failure?.kind.rawValue ?? "network", failure?.message ?? "\(error)"
                    )
                }
                if failure?.kind == .cancelled { return }
            }
            let now = began.duration(to: clock.now).seconds
            guard
                let wait = retry.delay(
                    after: number, retryable: PingRetry.isRetryable(status: status), elapsed: now)
            else { return }
            try? await Task.sleep(for: .seconds(wait))
        }
    }
}

/// Whether a failed ping is sent again, and after how long: a pure value, so the rule is
/// tested without a network. A refused connection or a 5xx, 408 or 429 is tried again after
/// 0.5 s, then 1 s, while an attempt still fits in the budget; another 4xx (a check that does
/// not exist) is not.
struct PingRetry: Sendable, Equatable {
    /// Seconds for the whole ping.
    let budget: TimeInterval
    /// Attempts after the first.
    let retries: Int
    /// The least time left that makes another attempt worth starting.
    static let leastAttempt: TimeInterval = 0.5

    /// The wait before the attempt after attempt `number` (from 1) failed, `elapsed` seconds
    /// after the first began; `nil` to stop.
    func delay(after number: Int, retryable: Bool, elapsed: TimeInterval) -> TimeInterval? {
        guard retryable, number <= retries else { return nil }
        let wait = 0.5 * Double(1 << min(number - 1, 10))
        guard elapsed + wait + Self.leastAttempt <= budget else { return nil }
        return wait
    }

    /// Whether an attempt that ended with `status` (`nil`: no answer) may be tried again.
    static func isRetryable(status: Int?) -> Bool {
        guard let status else { return true }
        return status >= 500 || status == 408 || status == 429
    }
}

/// Work with a time bound that holds whatever the work does.
enum Deadline {
    /// `work`'s value, or `nil` once `seconds` have passed or the caller is cancelled. The
    /// work runs in a task of its own, cancelled at the bound and not waited for: a transport
    /// that is slow to notice cannot hold the caller past it.
    static func within<Value: Sendable>(
        _ seconds: TimeInterval, _ work: @escaping @Sendable () async -> Value
    ) async -> Value? {
        let gate = Gate<Value?>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                gate.open(continuation)
                let worker = Task { gate.resume(await work()) }
                let timer = Task {
                    try? await Task.sleep(for: .seconds(seconds))
                    gate.resume(nil)
                }
                gate.onResume {
                    worker.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            gate.resume(nil)
        }
    }

    /// A continuation resumed once, by whichever comes first; one resumed before it was
    /// opened (a cancelled caller) resumes as it opens.
    private final class Gate<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, Never>?
            /// The value, once resumed (an array: `Value` may itself be optional).
            var result: [Value] = []
            var cleanups: [@Sendable () -> Void] = []
        }
        private let state = Locked(State())

        func open(_ continuation: CheckedContinuation<Value, Never>) {
            let early = state.withLock { state -> [Value] in
                if state.result.isEmpty { state.continuation = continuation }
                return state.result
            }
            if let value = early.first { continuation.resume(returning: value) }
        }

        func onResume(_ cleanup: @escaping @Sendable () -> Void) {
            let done = state.withLock { state -> Bool in
                if state.result.isEmpty { state.cleanups.append(cleanup) }
                return !state.result.isEmpty
            }
            if done { cleanup() }
        }

        func resume(_ value: Value) {
            let (continuation, cleanups) = state.withLock {
                state -> (CheckedContinuation<Value, Never>?, [@Sendable () -> Void]) in
                guard state.result.isEmpty else { return (nil, []) }
                state.result = [value]
                defer {
                    state.continuation = nil
                    state.cleanups = []
                }
                return (state.continuation, state.cleanups)
            }
            continuation?.resume(returning: value)
            for cleanup in cleanups { cleanup() }
        }
    }
}
