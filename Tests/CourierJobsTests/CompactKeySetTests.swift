import Testing

@testable import CourierJobs

/// ``CompactKeySet`` against `Set<UInt64>`: the same answers over merges of every size.
@Suite("CompactKeySet")
struct CompactKeySetTests {
    @Test(
        "agrees with Set<UInt64> on every insert and lookup, across merges", arguments: [1, 3, 64])
    func agreesWithSet(batchLimit: Int) throws {
        var generator = SplitMix(seed: UInt64(batchLimit))
        let keys = CompactKeySet(batchLimit: batchLimit)
        var reference = Set<UInt64>()
        for step in 0..<20_000 {
            // Small values repeat often (duplicates), large ones rarely; both ends of the range.
            let key: UInt64 =
                switch step % 4 {
                case 0: generator.next() % 500
                case 1: UInt64.max - generator.next() % 50
                default: generator.next()
                }
            #expect(keys.insert(key) == reference.insert(key).inserted, "step \(step): \(key)")
            if step % 97 == 0 {
                let probe = generator.next() % 1000
                #expect(keys.contains(probe) == reference.contains(probe))
            }
        }
        #expect(keys.count == reference.count)
        for key in reference { #expect(keys.contains(key)) }
        // A key already held is refused however long ago it came (merged or in the batch).
        let held = try #require(reference.first)
        #expect(!keys.insert(held))
        #expect(keys.count == reference.count)
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
