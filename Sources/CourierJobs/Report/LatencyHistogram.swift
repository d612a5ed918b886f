/// A log-linear histogram of durations, as HdrHistogram keeps them: each power-of-two range of
/// microseconds is split into 64 equal buckets, so any percentile is within 1.6 % of the true
/// value, memory is fixed (a few KiB) whatever the number of samples, and two histograms merge
/// by adding counts. `courier report` and `courier bench` both use it.
struct LatencyHistogram: Sendable, Equatable {
    static let subBuckets = 64
    /// 2^40 µs is 12 days: every duration a request can have.
    static let ranges = 41

    private(set) var counts: [UInt64]
    private(set) var total: UInt64 = 0
    private(set) var maxMicros: UInt64 = 0
    private(set) var minMicros: UInt64 = .max
    private(set) var sumMicros: Double = 0

    init() { counts = [UInt64](repeating: 0, count: Self.subBuckets * Self.ranges) }

    /// Records a duration in milliseconds (negative and NaN are ignored).
    mutating func record(milliseconds: Double) {
        guard milliseconds >= 0, milliseconds.isFinite else { return }
        let micros = UInt64(min(milliseconds * 1000, Double(UInt64(1) << 40)).rounded())
        counts[Self.index(of: micros)] += 1
        total += 1
        maxMicros = max(maxMicros, micros)
        minMicros = min(minMicros, micros)
        sumMicros += Double(micros)
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        total += other.total
        maxMicros = max(maxMicros, other.maxMicros)
        minMicros = min(minMicros, other.minMicros)
        sumMicros += other.sumMicros
    }

    var isEmpty: Bool { total == 0 }
    var maxMilliseconds: Double { Double(maxMicros) / 1000 }
    var minMilliseconds: Double { total == 0 ? 0 : Double(minMicros) / 1000 }
    var meanMilliseconds: Double { total == 0 ? 0 : sumMicros / Double(total) / 1000 }

    /// The value at percentile `p` (0...100) in milliseconds: the upper edge of the bucket that
    /// holds it, never above the largest value recorded.
    func percentile(_ p: Double) -> Double {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((p / 100 * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return Double(min(Self.upperEdge(of: index), maxMicros)) / 1000 }
        }
        return maxMilliseconds
    }

    /// Non-empty buckets as (lower edge ms, upper edge ms, count), for charts.
    var buckets: [(from: Double, to: Double, count: UInt64)] {
        counts.enumerated().compactMap { index, count in
            count == 0
                ? nil
                : (
                    Double(Self.lowerEdge(of: index)) / 1000,
                    Double(Self.upperEdge(of: index)) / 1000, count
                )
        }
    }

    /// Values below 64 µs get a bucket each; above, range r = floor(log2) - 5 splits
    /// [2^(r+5), 2^(r+6)) into 64.
    static func index(of micros: UInt64) -> Int {
        if micros < UInt64(subBuckets) { return Int(micros) }
        let magnitude = 63 - micros.leadingZeroBitCount  // floor(log2)
        let range = min(magnitude - 5, ranges - 1)
        let shift = magnitude - 6
        let sub = Int((micros >> UInt64(shift)) & 63)
        return min(range * subBuckets + sub, subBuckets * ranges - 1)
    }

    static func lowerEdge(of index: Int) -> UInt64 {
        let range = index / subBuckets
        let sub = UInt64(index % subBuckets)
        if range == 0 { return sub }
        return (UInt64(64) + sub) << UInt64(range - 1)
    }

    static func upperEdge(of index: Int) -> UInt64 {
        let range = index / subBuckets
        if range == 0 { return UInt64(index) }
        return lowerEdge(of: index) + (UInt64(1) << UInt64(range - 1)) - 1
    }
}
