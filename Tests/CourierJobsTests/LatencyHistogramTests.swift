import Testing

@testable import CourierJobs

/// The log-linear histogram behind report and bench percentiles.
@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test func percentilesWithinOneSixtyFourth() {
        var histogram = LatencyHistogram()
        for ms in 1...10_000 { histogram.record(milliseconds: Double(ms) / 10) }
        for (p, exact) in [(50.0, 500.0), (90, 900), (99, 990), (99.9, 999), (100, 1000)] {
            let value = histogram.percentile(p)
            #expect(value >= exact && value <= exact * (1 + 1.0 / 64), "p\(p) = \(value)")
        }
        #expect(histogram.maxMilliseconds == 1000 && histogram.minMilliseconds == 0.1)
        #expect(abs(histogram.meanMilliseconds - 500.05) < 0.001)
    }

    @Test func bucketEdgesTileTheLine() {
        var previous: UInt64?
        for index in 0..<(LatencyHistogram.subBuckets * 12) {
            let lower = LatencyHistogram.lowerEdge(of: index)
            let upper = LatencyHistogram.upperEdge(of: index)
            #expect(lower <= upper)
            if let previous { #expect(lower == previous + 1, "bucket \(index)") }
            #expect(
                LatencyHistogram.index(of: lower) == index
                    && LatencyHistogram.index(of: upper) == index)
            previous = upper
        }
    }

    @Test func mergeEqualsRecordingTogether() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var both = LatencyHistogram()
        for ms in stride(from: 0.5, to: 300, by: 0.7) {
            if Int(ms) % 2 == 0 { a.record(milliseconds: ms) } else { b.record(milliseconds: ms) }
            both.record(milliseconds: ms)
        }
        a.merge(b)
        #expect(a == both || (a.counts == both.counts && a.total == both.total))
        #expect(LatencyHistogram().percentile(50) == 0, "empty")
    }
}

/// The order of `courier bench` rounds and its medians.
@Suite("BenchSchedule")
struct BenchScheduleTests {
    @Test func backendsAlternateRoundByRound() {
        let order = BenchSchedule.order(backends: [.curl, .urlsession], rounds: 3)
        #expect(
            order.map { "\($0.backend.rawValue)\($0.round)" } == [
                "curl1", "urlsession1", "curl2", "urlsession2", "curl3", "urlsession3",
            ])
    }

    @Test func medians() {
        #expect(BenchSchedule.median([3, 1, 2]) == 2)
        #expect(BenchSchedule.median([4, 1, 2, 3]) == 2.5)
        #expect(BenchSchedule.median([]) == 0)
    }
}
