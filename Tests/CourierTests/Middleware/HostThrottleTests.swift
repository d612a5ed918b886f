import Courier
import Foundation
import Testing

/// The decisions of one host's throttle, on instants the tests choose: pauses, quotas, AIMD.
@Suite struct HostThrottleTests {
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_800_000_000)

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// Sends one request at `seconds` and answers it at once.
    func answer(
        _ throttle: inout HostThrottle, _ status: Int, _ headers: HTTPHeaders = [:],
        at seconds: Double = 0, sentAt: Double? = nil
    ) {
        throttle.finished()
        throttle.observe(
            status: status, headers: headers, sentAt: at(sentAt ?? seconds), at: at(seconds),
            date: date.addingTimeInterval(seconds))
    }

    func wait(_ admission: HostThrottle.Admission) -> Duration? {
        if case .send(let wait, _) = admission { return wait }
        return nil
    }

    /// Nothing asked the host to slow down: no request waits, whatever the order in which
    /// their clocks were read (a thread that read the clock first may take the lock second).
    @Test func aHostThatAskedForNothingNeverHoldsARequest() {
        var throttle = HostThrottle()
        #expect(throttle.admit(at: at(2)) == .send(wait: .zero, hold: nil))
        #expect(throttle.admit(at: at(1)) == .send(wait: .zero, hold: nil))
        #expect(throttle.admit(at: at(1.5)) == .send(wait: .zero, hold: nil))
    }

    @Test func retryAfterPausesEveryRequestUntilItsTime() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(&throttle, 503, ["Retry-After": "2"])
        #expect(throttle.admit(at: at(0.5)) == .send(wait: .milliseconds(1500), hold: .retryAfter))
        #expect(throttle.admit(at: at(0.5)) == .send(wait: .milliseconds(1500), hold: .retryAfter))
        #expect(wait(throttle.admit(at: at(2))) == .zero, "the pause is over")
    }

    @Test func after429sPauseTheWaitingRequestsGoAtTheHalvedRateNotAllAtOnce() {
        var throttle = HostThrottle()
        for _ in 0..<8 { _ = throttle.admit(at: at(0)) }
        answer(&throttle, 429, ["Retry-After": "2"], at: 0.1)
        #expect(throttle.rate == 4, "8 requests in the last second, halved")
        let waits = (0..<3).map { _ in wait(throttle.admit(at: at(0.1))) }
        #expect(waits == [.seconds(2), .milliseconds(2250), .milliseconds(2500)])
    }

    /// Requests admitted before a 429's pause, and held until it ended (below the gate, waiting
    /// for a rate-limit token), leave at the halved rate too, and the gate's later admissions
    /// queue behind them (trial Q: they had left at the job's rate, twice the host's).
    @Test func requestsHeldThroughAPauseTakeTheHalvedRateWithLaterAdmissions() {
        var throttle = HostThrottle(settings: .init(ceiling: 2))
        for _ in 0..<6 { _ = throttle.admit(at: at(0)) }
        answer(&throttle, 429, ["Retry-After": "3"], at: 0)
        #expect(throttle.rate == 1, "the job's 2 a second, halved")
        let held = (0..<3).map { _ in
            throttle.placeHeld(after: at(3), at: at(0.5), latest: at(30))
        }
        #expect(held == [at(3), at(4), at(5)])
        #expect(wait(throttle.admit(at: at(1))) == .seconds(5), "after the held ones")
        // One that would go past its latest takes nothing: the next one gets its place.
        #expect(throttle.placeHeld(after: at(3), at: at(1), latest: at(6)) == at(7))
        #expect(throttle.placeHeld(after: at(3), at: at(1), latest: at(30)) == at(7))
    }

    /// A pause without a 429 (a 503's `Retry-After`) sets no rate: the held requests may all
    /// go at its end.
    @Test func requestsHeldThroughA503PauseGoAtItsEnd() {
        var throttle = HostThrottle(settings: .init(ceiling: 2))
        for _ in 0..<3 { _ = throttle.admit(at: at(0)) }
        answer(&throttle, 503, ["Retry-After": "2"], at: 0.1)
        let held = (0..<2).map { _ in
            throttle.placeHeld(after: at(2.1), at: at(0.5), latest: at(30))
        }
        #expect(held == [at(2.1), at(2.1)])
    }

    @Test func retryAfterAsAnHTTPDate() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(&throttle, 503, ["Retry-After": "Fri, 15 Jan 2027 08:00:03 GMT"])
        // 1_800_000_000 is 2027-01-15T08:00:00Z.
        #expect(throttle.admit(at: at(1)) == .send(wait: .seconds(2), hold: .retryAfter))
    }

    @Test func onlyA429Or503Pauses() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(&throttle, 500, ["Retry-After": "5"])
        _ = throttle.admit(at: at(0))
        answer(&throttle, 200, ["Retry-After": "5"])
        #expect(wait(throttle.admit(at: at(0))) == .zero)
    }

    @Test func aLongerPauseWinsOverAShorterOne() {
        var throttle = HostThrottle()
        for _ in 0..<2 { _ = throttle.admit(at: at(0)) }
        answer(&throttle, 429, ["Retry-After": "5"])
        answer(&throttle, 429, ["Retry-After": "1"])
        #expect(wait(throttle.admit(at: at(0))) == .seconds(5))
    }

    @Test func aWaitBeyondTheBoundIsRefusedAndTakesNothing() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(&throttle, 429, ["Retry-After": "40"])
        #expect(
            throttle.admit(at: at(0), maxWait: .seconds(30))
                == .refuse(wait: .seconds(40), hold: .retryAfter))
        #expect(throttle.inFlight == 0, "a refused request is not under way")
        #expect(wait(throttle.admit(at: at(10), maxWait: .seconds(30))) == .seconds(30))
    }

    @Test func aLowQuotaIsSpreadUntilItsResetThenWaitsForIt() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(
            &throttle, 200,
            ["RateLimit-Limit": "100", "RateLimit-Remaining": "4", "RateLimit-Reset": "4"])
        // Four left in four seconds: one a second.
        let waits = (0..<4).map { _ in wait(throttle.admit(at: at(0))) }
        #expect(waits == [.zero, .seconds(1), .seconds(2), .seconds(3)])
        #expect(throttle.admit(at: at(0)) == .send(wait: .seconds(4), hold: .quota))
        #expect(throttle.quota == nil, "after the reset the quota is unknown until told")
    }

    @Test func aQuotaThatIsNotLowIsOnlyCountedDown() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(
            &throttle, 200,
            ["X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "60"])
        let waits = (0..<3).map { _ in wait(throttle.admit(at: at(1))) }
        #expect(waits == [.zero, .zero, .zero])
        #expect(throttle.admit(at: at(1)) == .send(wait: .seconds(59), hold: .quota))
        #expect(
            throttle.admit(at: at(1), maxWait: .seconds(30))
                == .refuse(wait: .seconds(59), hold: .quota),
            "the next one waits for the same reset, in line behind it")
    }

    @Test func aSpentQuotaBeyondTheBoundIsRefused() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        answer(&throttle, 200, ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "3600"])
        #expect(
            throttle.admit(at: at(0), maxWait: .seconds(30))
                == .refuse(wait: .seconds(3600), hold: .quota))
    }

    @Test func requestsStillUnderWayCountAsSpent() {
        var throttle = HostThrottle()
        for _ in 0..<3 { _ = throttle.admit(at: at(0)) }
        // One answered: two more may reach the server after it counted.
        answer(&throttle, 200, ["RateLimit-Remaining": "2", "RateLimit-Reset": "10"])
        #expect(throttle.quota?.remaining == 0)
        #expect(wait(throttle.admit(at: at(0))) == .seconds(10))
    }

    @Test func answersOutOfOrderKeepTheLowerCountOfAWindow() {
        var throttle = HostThrottle()
        for _ in 0..<2 { _ = throttle.admit(at: at(0)) }
        // 5 left, and one request still under way: 4.
        answer(&throttle, 200, ["RateLimit-Remaining": "5", "RateLimit-Reset": "10"])
        answer(&throttle, 200, ["RateLimit-Remaining": "8", "RateLimit-Reset": "10"], at: 0.4)
        #expect(throttle.quota?.remaining == 4)
        // A later window replaces it.
        _ = throttle.admit(at: at(11))
        answer(&throttle, 200, ["RateLimit-Remaining": "8", "RateLimit-Reset": "10"], at: 11)
        #expect(throttle.quota?.remaining == 8)
    }

    @Test func repeated429sHalveTheRateDownToTheFloor() {
        var throttle = HostThrottle(settings: .init(ceiling: 8, floor: 0.5))
        #expect(throttle.rate == nil)
        _ = throttle.admit(at: at(0))
        answer(&throttle, 429, at: 1)
        #expect(throttle.rate == 4, "the first 429 halves the ceiling")
        _ = throttle.admit(at: at(2))
        answer(&throttle, 429, at: 2)
        #expect(throttle.rate == 2)
        for second in 3..<10 {
            _ = throttle.admit(at: at(Double(second)))
            answer(&throttle, 429, at: Double(second))
        }
        #expect(throttle.rate == 0.5, "never below the floor")
    }

    @Test func a429SentBeforeTheLastHalvingDoesNotHalveAgain() {
        var throttle = HostThrottle(settings: .init(ceiling: 8))
        for _ in 0..<3 { _ = throttle.admit(at: at(0)) }
        answer(&throttle, 429, at: 1, sentAt: 0)
        answer(&throttle, 429, at: 1.1, sentAt: 0)
        answer(&throttle, 429, at: 1.2, sentAt: 0)
        #expect(throttle.rate == 4, "one burst of 429s is one halving")
    }

    /// The shared host budget tells every process of another's 429 (trial W): each halves its
    /// own rate once for it, whichever of the news and its own answer to the 429 comes first.
    @Test func anotherProcesss429HalvesTheRateOnceABurst() {
        var throttle = HostThrottle()
        for _ in 0..<8 { _ = throttle.admit(at: at(0)) }
        throttle.slowDown(forOthers429: at(0.4), at: at(0.5))
        #expect(throttle.rate == 4, "half the rate it was sending at")
        throttle.slowDown(forOthers429: at(0.4), at: at(0.6))
        #expect(throttle.rate == 4, "the same news again")
        answer(&throttle, 429, at: 0.7, sentAt: 0.3)
        #expect(throttle.rate == 4, "its own 429 of the same burst")
        throttle.slowDown(forOthers429: at(1), at: at(1.1))
        #expect(throttle.rate == 2, "a later burst halves again")
        // Its own 429 first, then the budget's news of it: one halving.
        var own = HostThrottle(settings: .init(ceiling: 8))
        _ = own.admit(at: at(0))
        answer(&own, 429, at: 1, sentAt: 0)
        own.slowDown(forOthers429: at(0.99), at: at(1.2))
        #expect(own.rate == 4)
    }

    @Test func successesRaiseTheRateSlowlyNeverAboveTheCeiling() {
        var throttle = HostThrottle(settings: .init(ceiling: 5, increase: 0.5))
        _ = throttle.admit(at: at(0))
        answer(&throttle, 429)
        #expect(throttle.rate == 2.5)
        var rates: [Double] = []
        for second in 1...7 {
            _ = throttle.admit(at: at(Double(second)))
            answer(&throttle, 200, at: Double(second))
            rates.append(throttle.rate ?? 0)
        }
        #expect(rates == [3, 3.5, 4, 4.5, 5, 5, 5])
        _ = throttle.admit(at: at(9))
        answer(&throttle, 404, at: 9)
        #expect(throttle.rate == 5, "a 4xx other than 429 changes nothing")
    }

    @Test func withoutACeilingAHostIsUnlimitedUntilA429HalvesItsRecentRate() {
        var throttle = HostThrottle()
        let waits = (0..<8).map { _ in wait(throttle.admit(at: at(0))) }
        #expect(waits.allSatisfy { $0 == .zero }, "no rate before a 429")
        #expect(throttle.recentRate(at: at(0.5)) == 8)
        answer(&throttle, 429, at: 0.5)
        #expect(throttle.rate == 4)
        // Spaced at the new rate: a quarter of a second apart.
        #expect(wait(throttle.admit(at: at(0.5))) == .zero)
        #expect(throttle.admit(at: at(0.5)) == .send(wait: .milliseconds(250), hold: .pace))
        #expect(throttle.admit(at: at(0.5)) == .send(wait: .milliseconds(500), hold: .pace))
    }

    @Test func aPaceBeyondTheBoundIsRefused() {
        var throttle = HostThrottle(settings: .init(ceiling: 0.2, floor: 0.1))
        _ = throttle.admit(at: at(0))
        answer(&throttle, 429)
        #expect(throttle.rate == 0.1)
        #expect(wait(throttle.admit(at: at(0), maxWait: .seconds(5))) == .zero)
        #expect(
            throttle.admit(at: at(0), maxWait: .seconds(5))
                == .refuse(wait: .seconds(10), hold: .pace))
    }

    @Test func aHostWithNothingToRememberIsIdle() {
        var throttle = HostThrottle()
        _ = throttle.admit(at: at(0))
        #expect(!throttle.isIdle(at: at(0)), "a request under way")
        answer(&throttle, 200)
        #expect(throttle.isIdle(at: at(3)))
        _ = throttle.admit(at: at(3))
        answer(&throttle, 429, ["Retry-After": "1"], at: 3)
        #expect(!throttle.isIdle(at: at(10)), "it keeps its rate")
    }
}
