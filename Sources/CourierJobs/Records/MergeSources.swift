import Courier
import Foundation

/// One run sorted in memory: entries into the merge's arena.
struct MemoryRun {
    let base: UnsafeRawBufferPointer
    let entries: [(start: Int, tab: Int, end: Int)]
}

/// One sorted input of a merge: the run in memory, a spilled run, or the existing records file
/// (whose keys are found by scanning, and whose order is checked as it is read).
final class MergeSource {
    private enum Kind {
        case memory(MemoryRun, next: Int)
        case run(LineInput)
        case existing(LineInput, path: String, pointer: String, scanner: RecordKeyScanner)
    }

    private var kind: Kind
    /// The current line's key, record and whole line (valid until the next ``advance()``).
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var record = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var line = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var isTombstone = false
    let isExisting: Bool
    /// The existing file's key before the current one (found, not in the line).
    private var previousKey: [UInt8] = []
    private var keyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 1)

    init(memory: MemoryRun) {
        kind = .memory(memory, next: 0)
        isExisting = false
    }

    init(run descriptor: Int32) throws(RecordsMerge.Failure) {
        kind = .run(LineInput(descriptor: descriptor, path: "a sorted run", bufferSize: 64 << 10))
        isExisting = false
    }

    init(existing: LineInput, path: String, pointer: String) {
        kind = .existing(
            existing, path: path, pointer: pointer, scanner: RecordKeyScanner(pointer: pointer))
        isExisting = true
    }

    deinit { keyBuffer.deallocate() }

    /// Moves to the next line; `false` at the end.
    func advance() throws(RecordsMerge.Failure) -> Bool {
        switch kind {
        case .memory(let run, let next):
            guard next < run.entries.count else { return false }
            kind = .memory(run, next: next + 1)
            let entry = run.entries[next]
            set(
                UnsafeRawBufferPointer(rebasing: run.base[entry.start..<entry.end]),
                tab: entry.tab - entry.start)
            return true
        case .run(let input):
            let next: UnsafeRawBufferPointer?
            do { next = try input.next() } catch { throw .file(error) }
            guard let next else { return false }
            guard let tab = next.firstIndex(of: 0x09), tab > 1 else {
                throw .malformed("a sorted run's line")
            }
            set(next, tab: tab)
            return true
        case .existing(let input, let path, let pointer, let scanner):
            while true {
                let next: UnsafeRawBufferPointer?
                do { next = try input.next() } catch { throw .file(error) }
                guard let next else { return false }
                if next.isEmpty { continue }
                guard let found = scanner.key(in: next) else {
                    throw .existingLine(number: input.lineNumber, path: path, pointer: pointer)
                }
                if !previousKey.isEmpty {
                    let order = found.withUnsafeBytes { a in
                        previousKey.withUnsafeBytes { b in RecordKey.compare(a, b) }
                    }
                    if order <= 0 { throw .unsorted }
                }
                previousKey = found
                if keyBuffer.count < found.count {
                    keyBuffer.deallocate()
                    keyBuffer = .allocate(byteCount: found.count * 2, alignment: 1)
                }
                found.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: keyBuffer[..<found.count]).copyMemory(
                        from: $0)
                }
                key = UnsafeRawBufferPointer(rebasing: keyBuffer[..<found.count])
                record = next
                line = next
                isTombstone = false
                return true
            }
        }
    }

    /// Takes a part line (`+KEY<TAB>RECORD`).
    private func set(_ whole: UnsafeRawBufferPointer, tab: Int) {
        line = whole
        isTombstone = whole[0] == UInt8(ascii: "-")
        key = UnsafeRawBufferPointer(rebasing: whole[1..<tab])
        record = UnsafeRawBufferPointer(rebasing: whole[(tab + 1)...])
    }
}

/// A binary heap of merge sources by their current key; for equal keys, the later source (the
/// higher rank) first, so that the first one out is the one that wins.
struct MergeHeap {
    private var items: [(source: MergeSource, rank: Int)]

    init(sources: [(MergeSource, Int)]) {
        items = sources.map { (source: $0.0, rank: $0.1) }
    }

    var top: (source: MergeSource, rank: Int)? { items.first }

    /// Reads each source's first line and orders them.
    mutating func start() throws(RecordsMerge.Failure) {
        var live: [(source: MergeSource, rank: Int)] = []
        for item in items where try item.source.advance() { live.append(item) }
        items = live
        for index in stride(from: items.count / 2 - 1, through: 0, by: -1) { down(index) }
    }

    /// Moves the top source to its next line, or drops it at its end.
    mutating func advanceTop() throws(RecordsMerge.Failure) {
        guard !items.isEmpty else { return }
        if try !items[0].source.advance() {
            items.swapAt(0, items.count - 1)
            items.removeLast()
        }
        if !items.isEmpty { down(0) }
    }

    private func before(_ a: Int, _ b: Int) -> Bool {
        let order = RecordKey.compare(items[a].source.key, items[b].source.key)
        return order != 0 ? order < 0 : items[a].rank > items[b].rank
    }

    private mutating func down(_ start: Int) {
        var index = start
        while true {
            let left = 2 * index + 1
            let right = left + 1
            var smallest = index
            if left < items.count, before(left, smallest) { smallest = left }
            if right < items.count, before(right, smallest) { smallest = right }
            if smallest == index { return }
            items.swapAt(index, smallest)
            index = smallest
        }
    }
}
