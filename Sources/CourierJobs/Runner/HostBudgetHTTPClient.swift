import Courier
import Foundation

/// Keeps every request within its host's budget as all courier processes of the user share it
/// (`"hostThrottle": "shared"`: shards, other jobs and replays on the machine; ``HostBudget``
/// decides, ``HostBudgetStore`` keeps it): each request, a redirect's hop too, takes its place
/// before it goes and teaches the budget with its answer. Nearest the transport, below the
/// run's own rate limit and the per-task host throttle, which go on as before.
///
/// A wait longer than `maxDelay` is not waited for: the request fails with `.throttled`, as the
/// host throttle's would. The budget's file failing (a full disk, no permission) never stops a
/// run: the request goes as if the budget were not shared, and the run says so once.
struct HostBudgetHTTPClient: HTTPClient {
    let wrapped: AnyHTTPClient
    let store: HostBudgetStore
    let time: any TimeSource
    /// How long a probe may hold the others: the job's request timeout.
    let lease: TimeInterval
    let maxDelay: TimeInterval?
    /// The run's own host throttles, told of another process's 429 (``HostBudget/slowedAt``)
    /// so that this run's rate to the host halves too.
    var hosts: HostThrottles?
    let warn: @Sendable (String) -> Void

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let origin = Origin(request.url) else { return try await wrapped.perform(request) }
        var waited = 0.0
        // Whether the budget held it where the host is paced (a pause, or after a 429 behind
        // another's probe): the gate below then gives it its place in the host's rate
        // (``HostPauseGate``), not the same instant as every other it held.
        var held = false
        // Counts the request as under way in the budget until its answer (``HostBudget``).
        let ticket = UInt64.random(in: 1...UInt64.max)
        while true {
            let admission: HostBudget.Admission
            do {
                admission = try admit(origin, ticket: ticket, held: &held)
            } catch {
                warn("the shared host budget cannot be kept (\(error)); requests go unshared")
                return try await wrapped.perform(request)
            }
            let wait: Double
            switch admission {
            case .send(let seconds): wait = seconds
            case .askAgain(let seconds): wait = seconds
            }
            // Trial AA: the retry of a host's first request, answered 429, was held behind the
            // next probe, which waited for its place below; then both left 4 ms apart.
            if wait > 0, hosts?.isPaced(origin) == true { held = true }
            waited += wait
            if let maxDelay, waited > maxDelay {
                if case .send = admission {
                    learn(origin, status: nil, headers: HTTPHeaders(), ticket: ticket)
                }
                throw HTTPError(
                    .throttled,
                    "not sent: its host's shared budget would hold it \(Int(waited.rounded(.up))) s, more than maxDelay \(Int(maxDelay)) s (the budget is \(store.file(for: origin).path); remove it to forget what the host said)",
                    url: request.displayURL)
            }
            if wait > 0 {
                // The attempt's `blockedMs` counts what it waited, with the rate limit's wait:
                // a stop's cut wait as far as it went (trial P logged the whole of it).
                let start = time.now()
                defer {
                    let slept = start.duration(to: time.now()).seconds
                    RateLimitWaits.current?.withLock { $0 += slept }
                }
                do {
                    try await time.sleep(for: .seconds(wait))
                } catch {
                    if case .send = admission {
                        learn(origin, status: nil, headers: HTTPHeaders(), ticket: ticket)
                    }
                    throw CancelledWait.host.error(url: request.displayURL)
                }
            }
            if case .send = admission { break }
        }
        let response: HTTPResponse
        let sentAt = time.date().timeIntervalSince1970
        do {
            response = try await HeldByBudget.$above.withValue(held) {
                try await wrapped.perform(request)
            }
        } catch {
            learn(origin, status: nil, headers: HTTPHeaders(), ticket: ticket)
            throw error
        }
        learn(
            origin, status: response.status, headers: response.headers, sentAt: sentAt,
            ticket: ticket)
        return response
    }

    /// Takes the request's place in `origin`'s budget now; `held` becomes true when the host
    /// is paused. Tells this run's throttles of a 429 another process got (news for a while,
    /// ``HostBudget/slowDownNews(now:)``).
    private func admit(_ origin: Origin, ticket: UInt64, held: inout Bool) throws(FileError)
        -> HostBudget.Admission
    {
        let now = time.date().timeIntervalSince1970
        var slowedAt: Double?
        var paused = false
        let admission = try store.update(origin) { budget in
            if let until = budget.pausedUntil, until > now { paused = true }
            slowedAt = budget.slowDownNews(now: now)
            return budget.admit(now: now, lease: lease, ticket: ticket)
        }
        if paused { held = true }
        if let slowedAt { hosts?.slowDown(origin, forOthers429: slowedAt) }
        return admission
    }

    private func learn(
        _ origin: Origin, status: Int?, headers: HTTPHeaders, sentAt: Double? = nil,
        ticket: UInt64
    ) {
        let (now, date) = (time.date().timeIntervalSince1970, time.date())
        do {
            try store.update(origin) {
                $0.learn(
                    status: status, headers: headers, now: now, date: date, sentAt: sentAt,
                    ticket: ticket)
            }
        } catch {
            warn("the shared host budget cannot be kept (\(error)); requests go unshared")
        }
    }
}

extension JobRunner {
    /// `say`, said once: a warning every request would repeat.
    static func once(_ say: @escaping @Sendable (String) -> Void) -> @Sendable (String) -> Void {
        let said = Locked(false)
        return { message in
            let first = said.withLock { said in
                defer { said = true }
                return !said
            }
            if first { say(message) }
        }
    }
}
