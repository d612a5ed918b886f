import Courier
import Foundation
import Testing

@testable import CourierJobs

/// The gate right above the transport (``HostPauseGate``): the requests its host's gate let
/// through before a 429's pause, and that were still waiting below it, wait for the pause and
/// then leave at the host's halved rate. The clock never moves: every wait is measured from the
/// same instant, whatever order the requests come in.
@Suite("HostPauseGate", .timeLimit(.minutes(1)))
struct HostPauseGateTests {
    /// A clock that stands still and records every wait asked of it.
    final class StillTime: TimeSource, @unchecked Sendable {
        let instant = ContinuousClock.now
        private let lock = NSLock()
        private var recorded: [Duration] = []

        var sleeps: [Duration] { lock.withLock { recorded } }

        func now() -> ContinuousClock.Instant { instant }
        func date() -> Date { Date(timeIntervalSince1970: 1_800_000_000) }
        func sleep(for duration: Duration) async throws {
            lock.withLock { recorded.append(duration) }
        }
    }

    /// Answers every request 200.
    struct Answering: HTTPClient {
        func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
            HTTPResponse(status: 200, url: request.url)
        }
    }

    let url = URL(string: "http://127.0.0.1:9/items")!

    /// Hosts whose job allows 2 requests a second, after one of `admitted` requests let
    /// through at once was answered 429 with `Retry-After: 3`.
    func pausedHosts(_ time: StillTime, admitted: Int) throws -> HostThrottles {
        let hosts = HostThrottles(settings: .init(ceiling: 2), time: time)
        let origin = try #require(Origin(url))
        for _ in 0..<admitted { _ = hosts.admit(origin, maxWait: nil) }
        let refused = HTTPResponse(status: 429, headers: ["Retry-After": "3"], url: url)
        hosts.finish(origin, response: refused, sentAt: time.instant)
        return hosts
    }

    func gate(_ hosts: HostThrottles, maxDelay: TimeInterval) -> HostPauseGate {
        HostPauseGate(wrapped: AnyHTTPClient(Answering()), hosts: hosts, maxDelay: maxDelay)
    }

    @Test("held requests leave after the pause one a second, and later admissions follow them")
    func heldRequestsTakeTheHalvedRate() async throws {
        let time = StillTime()
        let hosts = try pausedHosts(time, admitted: 4)
        let gate = gate(hosts, maxDelay: 30)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask { try await gate.perform(HTTPRequest(url: url)).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(time.sleeps.sorted() == [.seconds(3), .seconds(4), .seconds(5)])
        let origin = try #require(Origin(url))
        #expect(hosts.admit(origin, maxWait: nil) == .send(wait: .seconds(6), hold: .retryAfter))
    }

    @Test("a held request whose place is past maxDelay is refused unsent, in words")
    func aPlacePastMaxDelayIsRefused() async throws {
        let time = StillTime()
        let hosts = try pausedHosts(time, admitted: 3)
        let gate = gate(hosts, maxDelay: 4)
        _ = try await gate.perform(HTTPRequest(url: url))
        _ = try await gate.perform(HTTPRequest(url: url))
        let error = await #expect(throws: HTTPError.self) {
            try await gate.perform(HTTPRequest(url: url))
        }
        #expect(error?.kind == .throttled)
        #expect(error?.message.contains("pace") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("5 s") == true, "\(error?.message ?? "")")
        #expect(time.sleeps == [.seconds(3), .seconds(4)])
    }

    /// The shared budget held three requests for the pause and lets them go as it ends (here
    /// the host is no longer paused when they come): each takes its place at the halved rate,
    /// not all at once (trial W); one the budget did not hold goes as it is.
    @Test("requests the shared budget held for a pause take their places as it ends")
    func heldAboveTakeTheirPlaces() async throws {
        let time = StillTime()
        let hosts = HostThrottles(settings: .init(ceiling: 2), time: time)
        let origin = try #require(Origin(url))
        _ = hosts.admit(origin, maxWait: nil)
        hosts.finish(origin, response: HTTPResponse(status: 429, url: url), sentAt: time.instant)
        let gate = gate(hosts, maxDelay: 30)
        _ = try await gate.perform(HTTPRequest(url: url))
        #expect(time.sleeps.isEmpty, "not held above: no place taken")
        try await HeldByBudget.$above.withValue(true) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await gate.perform(HTTPRequest(url: url)).status }
                }
                for try await status in group { #expect(status == 200) }
            }
        }
        #expect(time.sleeps.sorted() == [.zero, .seconds(1), .seconds(2)])
    }
}
