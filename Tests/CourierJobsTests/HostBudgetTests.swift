import Courier
@testable import CourierJobs
import Foundation
import Testing

/// The budget every courier process shares for a host (`"hostThrottle": "shared"`), decided
/// without a network or a clock, and kept in a file under a lock.
@Suite("Shared host budget")
struct HostBudgetTests {
    static let date = Date(timeIntervalSince1970: 1_000)

    static func quota(_ remaining: Int, reset: Int, limit: Int = 10) -> HTTPHeaders {
        HTTPHeaders([
            ("RateLimit-Limit", "\(limit)"), ("RateLimit-Remaining", "\(remaining)"),
            ("RateLimit-Reset", "\(reset)"),
        ])
    }

    @Test("no quota known: one probe at a time, the others ask again; the answer sets the quota")
    func probe() {
        var budget = HostBudget()
        #expect(budget.admit(now: 1_000, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_000.01, lease: 30) == .askAgain(after: 0.05))
        budget.learn(status: 200, headers: Self.quota(9, reset: 10), now: 1_000.1, date: Self.date)
        #expect(budget.quota == HostBudget.Quota(remaining: 9, resetAt: 1_010.1, limit: 10))
        #expect(budget.admit(now: 1_000.2, lease: 30) == .send(wait: 0))
        #expect(budget.quota?.remaining == 8)
    }

    @Test("a probe whose process died holds the others only for its lease")
    func leaseEnds() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 5)
        #expect(budget.admit(now: 1_004, lease: 5) == .askAgain(after: 0.05))
        #expect(budget.admit(now: 1_005.5, lease: 5) == .send(wait: 0), "a new probe")
    }

    @Test("a low quota is spread until its reset; a spent one holds every request until then")
    func lowAndSpent() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30)
        budget.learn(
            status: 200, headers: Self.quota(2, reset: 4, limit: 20), now: 1_000, date: Self.date)
        // 2 left of 20 is low: the 4 s to the reset spread over the 2 requests.
        #expect(budget.admit(now: 1_000, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_000, lease: 30) == .send(wait: 2))
        #expect(budget.admit(now: 1_000, lease: 30) == .askAgain(after: 4))
        // After the reset the window's quota is unknown again: a probe.
        #expect(budget.admit(now: 1_004.5, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_004.5, lease: 30) == .askAgain(after: 0.05))
    }

    @Test(
        "a Retry-After pauses the host for every process; a late answer of an old window is ignored"
    )
    func pauseAndStaleAnswers() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30)
        budget.learn(
            status: 429, headers: HTTPHeaders([("Retry-After", "3")]), now: 1_000, date: Self.date)
        #expect(budget.pausedUntil == 1_003)
        #expect(budget.admit(now: 1_001, lease: 30) == .send(wait: 2), "the probe after the pause")
        budget.learn(status: 200, headers: Self.quota(5, reset: 20), now: 1_003, date: Self.date)
        budget.learn(status: 200, headers: Self.quota(9, reset: 2), now: 1_003, date: Self.date)
        #expect(budget.quota?.resetAt == 1_023, "an answer does not end the window sooner")
        // The window still runs: an answer read late never gives requests back.
        budget.learn(status: 200, headers: Self.quota(7, reset: 20), now: 1_003.5, date: Self.date)
        #expect(budget.quota?.remaining == 5)
        // Once it is over, an answer tells the new window.
        budget.learn(status: 200, headers: Self.quota(9, reset: 20), now: 1_024, date: Self.date)
        #expect(budget.quota == HostBudget.Quota(remaining: 9, resetAt: 1_044, limit: 10))
    }

    @Test("answers to requests sent before our window ended open no new window: a probe does")
    func answersAcrossWindows() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30)
        // The probe's answer, read late: our window ends at 1_006.5, the host's at 1_005.8.
        budget.learn(
            status: 200, headers: Self.quota(3, reset: 2, limit: 4), now: 1_004.5,
            date: Self.date, sentAt: 1_003.8)
        #expect(budget.quota == HostBudget.Quota(remaining: 3, resetAt: 1_006.5, limit: 4))
        // Three go at 1_006.2, inside our window and after the host's: they begin its next.
        for _ in 0..<3 { _ = budget.admit(now: 1_006.2, lease: 30) }
        #expect(budget.quota?.remaining == 0)
        // Their answers, read after our window ended, say 3, 2, 1 left: none is believed.
        for left in [3, 2, 1] {
            budget.learn(
                status: 200, headers: Self.quota(left, reset: 2, limit: 4), now: 1_006.6,
                date: Self.date, sentAt: 1_006.2)
            #expect(budget.quota == nil, "\(left) left, announced for a window of the host's")
        }
        // One probe learns the window: the others ask again.
        #expect(budget.admit(now: 1_006.6, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_006.6, lease: 30) == .askAgain(after: 0.05))
        budget.learn(
            status: 200, headers: Self.quota(0, reset: 2, limit: 4), now: 1_006.7,
            date: Self.date, sentAt: 1_006.6)
        #expect(budget.quota == HostBudget.Quota(remaining: 0, resetAt: 1_008.7, limit: 4))
        #expect(budget.admit(now: 1_006.8, lease: 30) == .askAgain(after: 1_008.7 - 1_006.8))
    }

    /// Seen on a loaded machine: a request sent at the end of our window was answered after
    /// the next window's probe had gone; its answer (not believed: it was sent before our
    /// window ended) had ended the probe's hold, a second probe went, and the host's window
    /// got five requests of four.
    @Test("only the probe's own answer ends its hold; a late answer of another does not")
    func onlyTheProbeEndsItsHold() throws {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30, ticket: 1)
        budget.learn(
            status: 200, headers: Self.quota(1, reset: 2, limit: 4), now: 1_000.1,
            date: Self.date, sentAt: 1_000, ticket: 1)
        #expect(budget.admit(now: 1_001.9, lease: 30, ticket: 2) == .send(wait: 0))
        // Our window is over: the next request probes, the others ask again.
        #expect(budget.admit(now: 1_002.2, lease: 30, ticket: 3) == .send(wait: 0))
        #expect(budget.admit(now: 1_002.3, lease: 30, ticket: 4) == .askAgain(after: 0.05))
        // Ticket 2's answer, read late: not the probe's.
        budget.learn(
            status: 200, headers: Self.quota(3, reset: 2, limit: 4), now: 1_002.4,
            date: Self.date, sentAt: 1_001.9, ticket: 2)
        #expect(budget.admit(now: 1_002.5, lease: 30, ticket: 5) == .askAgain(after: 0.05))
        // The probe's answer ends the hold, and tells the window (less ticket 2, under way
        // no more, and nothing else admitted).
        budget.learn(
            status: 200, headers: Self.quota(2, reset: 2, limit: 4), now: 1_002.6,
            date: Self.date, sentAt: 1_002.2, ticket: 3)
        #expect(budget.probeUntil == nil && budget.probeTicket == nil)
        #expect(budget.quota?.remaining == 2)
        // The store keeps whose probe it is, as text.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-hosts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = HostBudgetStore(folder: folder)
        let origin = try #require(Origin(URL(string: "https://api.example.com/x")!))
        _ = try store.update(origin) { $0.admit(now: 1_000, lease: 30, ticket: 1 << 62 + 3) }
        #expect(try store.update(origin) { $0.probeTicket } == 1 << 62 + 3)
    }

    @Test("a new window's quota leaves out the requests still under way from the last one")
    func requestsUnderWayCount() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30, ticket: 1)
        #expect(budget.inFlight.keys.sorted() == [1], "the probe is under way")
        budget.learn(
            status: 200, headers: Self.quota(3, reset: 2, limit: 4), now: 1_000.1,
            date: Self.date, sentAt: 1_000, ticket: 1)
        #expect(budget.inFlight.isEmpty)
        // Three go at the end of the window; one is answered, two are still under way (their
        // process was slow to send them) when the window ends and a probe learns the next.
        for ticket: UInt64 in [2, 3, 4] {
            _ = budget.admit(now: 1_001.9, lease: 30, ticket: ticket)
        }
        budget.learn(
            status: 200, headers: Self.quota(0, reset: 1, limit: 4), now: 1_002,
            date: Self.date, sentAt: 1_001.9, ticket: 2)
        #expect(budget.admit(now: 1_003, lease: 30, ticket: 5) == .send(wait: 0), "a probe")
        budget.learn(
            status: 200, headers: Self.quota(3, reset: 2, limit: 4), now: 1_003.1,
            date: Self.date, sentAt: 1_003, ticket: 5)
        // The host said 3 left before the two reached it: 1 is what may go.
        #expect(budget.quota == HostBudget.Quota(remaining: 1, resetAt: 1_005.1, limit: 4))
        // A request that failed, or whose process was killed (its lease ran out), stops counting.
        budget.learn(status: nil, headers: HTTPHeaders(), now: 1_003.2, date: Self.date, ticket: 3)
        #expect(budget.inFlight.keys.sorted() == [4])
        _ = budget.admit(now: 1_032, lease: 30, ticket: 6)
        #expect(budget.inFlight.keys.sorted() == [6])
        // A host left open counts nothing: its budget document is not rewritten per request.
        var open = HostBudget()
        _ = open.admit(now: 1_000, lease: 30, ticket: 1)
        open.learn(status: 200, headers: HTTPHeaders(), now: 1_000, date: Self.date, ticket: 1)
        _ = open.admit(now: 1_001, lease: 30, ticket: 2)
        #expect(open.inFlight.isEmpty)
    }

    @Test("a host that announces no quota is left open for a while, then probed again")
    func openHost() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 30)
        budget.learn(status: 200, headers: HTTPHeaders(), now: 1_000, date: Self.date)
        #expect(budget.admit(now: 1_001, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_001, lease: 30) == .send(wait: 0))
        #expect(budget.admit(now: 1_061, lease: 30) == .send(wait: 0), "a probe")
        #expect(budget.admit(now: 1_061, lease: 30) == .askAgain(after: 0.05))
        // Answers that keep saying no quota keep it open, written once per half minute.
        budget.learn(status: 200, headers: HTTPHeaders(), now: 1_062, date: Self.date)
        let open = budget.openUntil
        budget.learn(status: 200, headers: HTTPHeaders(), now: 1_070, date: Self.date)
        #expect(budget.openUntil == open, "unchanged: nothing to write")
        budget.learn(status: 200, headers: HTTPHeaders(), now: 1_095, date: Self.date)
        #expect(budget.openUntil == 1_155)
    }

    /// Trial W: a process that had no request answered 429 sent the requests the pause had
    /// held all at once after it; the 429 is now news for every process, which each halves
    /// its own rate for (``HostThrottle``), once.
    @Test("a 429 is news for every process while its pause lasts and 2 s after; one a burst")
    func slowDownNews() throws {
        var budget = HostBudget()
        #expect(budget.slowDownNews(now: 1_000) == nil)
        budget.learn(
            status: 429, headers: HTTPHeaders([("Retry-After", "5")]), now: 1_000,
            date: Self.date, sentAt: 999.9)
        #expect(budget.slowedAt == 1_000)
        #expect(budget.slowDownNews(now: 1_004.9) == 1_000, "the pause lasts")
        // A 429 to a request sent before the last one came is of its burst.
        budget.learn(
            status: 429, headers: HTTPHeaders(), now: 1_000.2, date: Self.date, sentAt: 999.95)
        #expect(budget.slowedAt == 1_000)
        // Without a pause it is news for 2 s; a 503, or an answer without a status, is none.
        var plain = HostBudget()
        plain.learn(status: 429, headers: HTTPHeaders(), now: 1_000, date: Self.date)
        #expect(plain.slowDownNews(now: 1_001.9) == 1_000)
        #expect(plain.slowDownNews(now: 1_002.1) == nil)
        plain.learn(
            status: 503, headers: HTTPHeaders([("Retry-After", "5")]), now: 1_010,
            date: Self.date, sentAt: 1_009)
        plain.learn(status: nil, headers: HTTPHeaders(), now: 1_010, date: Self.date)
        #expect(plain.slowedAt == 1_000)
        // A 429 to a request sent after it is a new burst.
        plain.learn(
            status: 429, headers: HTTPHeaders(), now: 1_020, date: Self.date, sentAt: 1_019.9)
        #expect(plain.slowedAt == 1_020)
        // The store keeps it.
        let origin = try #require(Origin(URL(string: "https://api.example.com/x")!))
        let bytes = HostBudgetStore.bytes(plain, origin: origin)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-hosts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("host.json")
        try Data(bytes).write(to: file)
        #expect(HostBudgetStore.load(file).slowedAt == 1_020)
    }

    @Test("a probe holds the others 5 s at most, however long its request's timeout")
    func probeIsShort() {
        var budget = HostBudget()
        _ = budget.admit(now: 1_000, lease: 600)
        #expect(budget.probeUntil == 1_005)
    }

    @Test("the store keeps the budget between updates, and starts afresh from a damaged file")
    func store() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-hosts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = HostBudgetStore(folder: folder)
        let origin = try #require(Origin(URL(string: "https://api.example.com/x")!))
        _ = try store.update(origin) { $0.admit(now: 1_000, lease: 30) }
        try store.update(origin) {
            $0.learn(status: 200, headers: Self.quota(3, reset: 10), now: 1_000, date: Self.date)
        }
        #expect(try store.update(origin) { $0.quota?.remaining } == 3)
        _ = try store.update(origin) { $0.admit(now: 1_000, lease: 30, ticket: 1 << 60 + 7) }
        #expect(try store.update(origin) { $0.inFlight } == [1 << 60 + 7: 1_030])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let document = try #require(files.first { $0.hasSuffix(".json") })
        try Data("{not json".utf8).write(to: folder.appendingPathComponent(document))
        #expect(try store.update(origin) { $0 } == HostBudget(), "a damaged file is started afresh")
        #expect(
            HostBudgetStore.folder(environment: ["HOME": "/home/u"]).path
                == "/home/u/.local/state/courier/hosts")
        #expect(
            HostBudgetStore.folder(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).path
                == "/s/courier/hosts")
        #expect(
            HostBudgetStore.folder(environment: ["COURIER_HOSTS_DIR": "/given"]).path == "/given")
    }
}
