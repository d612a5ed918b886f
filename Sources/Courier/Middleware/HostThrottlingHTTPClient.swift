import Foundation

/// Keeps every request to a host within what the host asked for: a `Retry-After` on a 429 or
/// 503 pauses all requests to that origin (scheme, host and port), an announced quota
/// (`RateLimit-*`, `X-RateLimit-*`) is spread until its reset, and repeated 429s halve the
/// host's rate, which recovers slowly (``HostThrottle`` decides; this client waits).
///
/// ```swift
/// let hosts = HostThrottles()  // one per run, shared by every client made over it
/// let polite = HostThrottlingHTTPClient(wrapping: transport, hosts: hosts, maxDelay: 30)
/// ```
/// A request that would wait longer than `maxDelay` seconds is not sent: it fails with
/// `.throttled`, saying why. Put it under ``RetryingHTTPClient`` so that every attempt waits
/// for its host. A redirected request waits for its first host; the final response teaches
/// the host that sent it.
public struct HostThrottlingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public let wrapped: Wrapped
    /// The per-host state, shared with every other client made over it.
    public let hosts: HostThrottles
    /// The longest a request waits for its host, in seconds; `nil` for no bound.
    public let maxDelay: TimeInterval?
    private let onWait: (@Sendable (TimeInterval) -> Void)?

    /// - Parameter onWait: told the seconds each request waited for its host, when it did.
    public init(
        wrapping wrapped: Wrapped, hosts: HostThrottles, maxDelay: TimeInterval? = nil,
        onWait: (@Sendable (TimeInterval) -> Void)? = nil
    ) {
        self.wrapped = wrapped
        self.hosts = hosts
        self.maxDelay = maxDelay
        self.onWait = onWait
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let origin = Origin(request.url) else { return try await wrapped.perform(request) }
        let wait = try admit(request, origin: origin)
        if wait > .zero { try await waitForHost(wait, request: request, origin: origin) }
        let sentAt = hosts.time.now()
        let response: HTTPResponse
        do {
            response = try await wrapped.perform(request)
        } catch {
            hosts.finish(origin, response: nil, sentAt: sentAt)
            throw error
        }
        hosts.finish(origin, response: response, sentAt: sentAt)
        return response
    }

    /// The wait the host's gate gives the request, or the refusal.
    @inline(never)
    private func admit(_ request: HTTPRequest, origin: Origin) throws(HTTPError) -> Duration {
        switch hosts.admit(origin, maxWait: maxDelay.map { .seconds($0) }) {
        case .send(let wait, _):
            return wait
        case .refuse(let wait, let hold):
            throw HTTPError(
                .throttled, Self.refusal(origin, wait: wait, hold: hold, maxDelay: maxDelay ?? 0),
                url: request.displayURL)
        }
    }

    private func waitForHost(_ wait: Duration, request: HTTPRequest, origin: Origin) async throws {
        let time = hosts.time
        let start = time.now()
        do {
            try await time.sleep(for: wait)
        } catch {
            hosts.finish(origin, response: nil, sentAt: nil)
            onWait?(start.duration(to: time.now()).seconds)
            throw CancelledWait.host.error(url: request.displayURL)
        }
        onWait?(start.duration(to: time.now()).seconds)
    }

    /// Why a request was not sent, in the words of ``RetryPolicy``'s `Retry-After` refusal.
    package static func refusal(
        _ origin: Origin, wait: Duration, hold: HostThrottle.Hold, maxDelay: TimeInterval
    ) -> String {
        let seconds = Self.seconds(wait.seconds)
        let limit = "more than maxDelay \(Self.seconds(maxDelay)) s; not sent"
        switch hold {
        case .retryAfter:
            return "\(origin) asked for a pause (Retry-After) of \(seconds) s more, \(limit)"
        case .quota:
            return "\(origin)'s rate-limit quota is spent until its reset in \(seconds) s, \(limit)"
        case .pace:
            return
                "\(origin)'s pace (after 429s, or a low rate-limit quota) would hold the request \(seconds) s, \(limit)"
        }
    }

    private static func seconds(_ value: TimeInterval) -> String {
        if value == value.rounded(), value < 1e15 { return WholeNumberText.of(value) }
        return value >= 10 ? String(Int(value.rounded(.up))) : String(format: "%.1f", value)
    }
}

/// The per-host state of ``HostThrottlingHTTPClient``: one ``HostThrottle`` per origin, for
/// every client made over it (a job run makes one and shares it by all its tasks).
public final class HostThrottles: Sendable {
    /// The clock every host's waits are measured and slept on.
    public let time: any TimeSource
    /// Where each host's throttle starts.
    public let settings: HostThrottle.Settings
    private let state = Locked(State())

    private struct State {
        /// Boxed: a `HostThrottle` is large, and changing one in place through the
        /// dictionary's subscript allocated the accessor's frame on the heap, three times a
        /// request. An entry is only touched under the lock.
        var hosts: [Origin: Entry] = [:]
        var finishedSinceSweep = 0

        /// The throttle of `origin`, made with `settings` if it has none yet.
        mutating func entry(_ origin: Origin, settings: HostThrottle.Settings) -> Entry {
            if let entry = hosts[origin] { return entry }
            let entry = Entry(HostThrottle(settings: settings))
            hosts[origin] = entry
            return entry
        }
    }

    /// One origin's throttle, changed in place under the lock.
    private final class Entry {
        var throttle: HostThrottle

        init(_ throttle: HostThrottle) { self.throttle = throttle }
    }

    /// Hosts that hold nothing back are dropped every this many requests, so that a run over
    /// many hosts keeps only the ones with something to remember.
    static let sweepInterval = 4096

    public init(
        settings: HostThrottle.Settings = HostThrottle.Settings(),
        time: any TimeSource = SystemTimeSource()
    ) {
        self.settings = settings
        self.time = time
    }

    /// The throttle of `origin` as it is now, if it has one.
    public func throttle(for origin: Origin) -> HostThrottle? {
        state.withLock { $0.hosts[origin]?.throttle }
    }

    /// Until when `origin` asked not to be sent anything (a `Retry-After`), if it did: read
    /// without copying its throttle, for a check on every request.
    package func pausedUntil(_ origin: Origin) -> ContinuousClock.Instant? {
        state.withLock { $0.hosts[origin]?.throttle.pausedUntil }
    }

    /// Where a request `origin`'s gate admitted before a pause, and that was held until it
    /// ended, takes its place in the host's rate (``HostThrottle/placeHeld(after:at:latest:)``):
    /// when it may go. Later than `latest`, it took nothing and is not to be sent.
    package func placeHeld(
        _ origin: Origin, after pauseEnd: ContinuousClock.Instant,
        latest: ContinuousClock.Instant
    ) -> ContinuousClock.Instant {
        let settings = self.settings
        return state.withLock { [time] state in
            state.entry(origin, settings: settings).throttle.placeHeld(
                after: pauseEnd, at: time.now(), latest: latest)
        }
    }

    /// Whether `origin` has a rate after 429s: its requests are spread at it.
    package func isPaced(_ origin: Origin) -> Bool {
        state.withLock { $0.hosts[origin]?.throttle.rate != nil }
    }

    /// Another process's request to `origin` was answered 429 at `answeredAt`, seconds since
    /// 1970 (``HostThrottle/slowDown(forOthers429:at:)``): this run's rate to it halves, once a
    /// burst.
    package func slowDown(_ origin: Origin, forOthers429 answeredAt: TimeInterval) {
        let settings = self.settings
        state.withLock { [time] state in
            let now = time.now()
            // A little earlier than the wall clock says: this run's own halving for the same
            // 429, made a moment after the budget learned it, must stay the later of the two.
            let ago = time.date().timeIntervalSince1970 - answeredAt + 0.01
            state.entry(origin, settings: settings).throttle.slowDown(
                forOthers429: now - .seconds(max(0, ago)), at: now)
        }
    }

    /// Admits a request to `origin` (``HostThrottle/admit(at:maxWait:)``); one that is sent
    /// must be finished with ``finish(_:response:sentAt:)``.
    public func admit(_ origin: Origin, maxWait: Duration?) -> HostThrottle.Admission {
        let settings = self.settings
        return state.withLock { [time] state in
            // Read under the lock, so that admissions see the clock in the order they come.
            state.entry(origin, settings: settings).throttle.admit(
                at: time.now(), maxWait: maxWait)
        }
    }

    /// The request admitted to `origin` is over: with its response, which teaches the host
    /// that sent it (the last hop's, after redirects), or without one (it failed, or was never
    /// sent: `sentAt` is then `nil`).
    public func finish(_ origin: Origin, response: HTTPResponse?, sentAt: ContinuousClock.Instant?)
    {
        let now = time.now()
        let date = time.date()
        state.withLock { state in
            state.hosts[origin]?.throttle.finished()
            if let response, let sentAt {
                let answered =
                    response.redirectCount > 0 ? Origin(response.url) ?? origin : origin
                state.entry(answered, settings: settings).throttle.observe(
                    status: response.status, headers: response.headers, sentAt: sentAt, at: now,
                    date: date)
            }
            state.finishedSinceSweep += 1
            if state.finishedSinceSweep >= Self.sweepInterval {
                state.finishedSinceSweep = 0
                state.hosts = state.hosts.filter { !$0.value.throttle.isIdle(at: now) }
            }
        }
    }
}
