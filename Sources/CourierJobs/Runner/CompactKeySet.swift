import Foundation

/// A set of 64-bit keys that costs 8 bytes a key, for the ids a fan-out has handed out
/// (a million children: 8 MB, where a `Set<UInt64>` takes 16 MB and 24 MB while it grows).
///
/// Keys live in one sorted buffer, grown with `realloc` (which moves large blocks by remapping
/// pages, not copying them, so growth never holds two copies), and a small unsorted batch of
/// recent ones. A full batch is sorted and merged into the buffer in place, from the back.
/// Lookups are a binary search and a hash probe.
final class CompactKeySet {
    private var sorted: UnsafeMutablePointer<UInt64>?
    private var sortedCount = 0
    private var capacity = 0
    private var batch = Set<UInt64>()
    private let batchLimit: Int

    /// - Parameter batchLimit: recent keys kept unsorted before a merge (small in tests).
    init(batchLimit: Int = 8192) {
        self.batchLimit = max(1, batchLimit)
    }

    deinit { free(sorted) }

    /// How many keys the set holds.
    var count: Int { sortedCount + batch.count }

    /// Whether the set holds `key`.
    func contains(_ key: UInt64) -> Bool {
        batch.contains(key) || sortedIndex(of: key) != nil
    }

    /// Adds `key`; false when it was there already.
    @discardableResult
    func insert(_ key: UInt64) -> Bool {
        if contains(key) { return false }
        batch.insert(key)
        if batch.count >= batchLimit { merge() }
        return true
    }

    private func sortedIndex(of key: UInt64) -> Int? {
        guard let sorted else { return nil }
        var low = 0
        var high = sortedCount
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < sortedCount && sorted[low] == key ? low : nil
    }

    /// Moves the batch into the sorted buffer: the buffer grows at its end, then both sorted
    /// runs are merged from the back, so nothing is overwritten before it is read.
    private func merge() {
        let incoming = batch.sorted()
        batch.removeAll(keepingCapacity: true)
        let total = sortedCount + incoming.count
        if total > capacity {
            let grown = max(total, capacity + capacity / 2, 1024)
            guard
                let moved = realloc(sorted, grown * MemoryLayout<UInt64>.stride)?
                    .assumingMemoryBound(to: UInt64.self)
            else { fatalError("out of memory for \(grown) fan-out keys") }
            sorted = moved
            capacity = grown
        }
        guard let buffer = sorted else { return }
        var old = sortedCount - 1
        var new = incoming.count - 1
        var place = total - 1
        while new >= 0 {
            if old >= 0, buffer[old] > incoming[new] {
                buffer[place] = buffer[old]
                old -= 1
            } else {
                buffer[place] = incoming[new]
                new -= 1
            }
            place -= 1
        }
        sortedCount = total
    }
}
