import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `"write": "merge"` in bounded memory: a run's records (part lines, ``RecordsRule``) are
/// sorted by key in runs of at most ``Limits/runBytes``, each spilled to a scratch file, and
/// merged k ways with the records file (kept sorted by key) into a new file. No table of keys
/// is ever held: memory is one run's lines, and a buffer per file being merged.
///
/// Which record wins: for one key, the last added (records are added in the order a run
/// received them), over the file's; a tombstone (`-KEY`) removes the key, from the file and
/// from what came before it. Within a run, equal keys keep the last; across runs, the later
/// run wins, so the order of arrival decides at every stage.
final class RecordsMerge {
    struct Limits: Sendable {
        /// Bytes of lines (and their index) held before a run is sorted and spilled.
        var runBytes = 32 << 20
        /// Runs merged at once; more are merged in passes first.
        var fanIn = 64
    }

    /// What the merge did.
    struct Summary: Equatable, Sendable {
        /// Lines added (part lines), tombstones included.
        var added = 0
        /// Lines in the new file.
        var written = 0
        /// Keys of the file that a tombstone removed.
        var removed = 0
        /// Runs spilled to scratch files.
        var spilled = 0
    }

    /// Why a merge did not finish.
    enum Failure: Error, CustomStringConvertible {
        case file(FileError)
        /// A line of the records file that has no key (or is not JSON).
        case existingLine(number: Int, path: String, pointer: String)
        /// The records file is not sorted by key (or repeats one): merged the slow way.
        case unsorted
        /// A part line that is not one (`+KEY<TAB>…`): a part was damaged.
        case malformed(String)

        var description: String {
            switch self {
            case .file(let error): "\(error)"
            case .existingLine(let number, let path, let pointer):
                "line \(number) of \(path) is not a JSON record with a key at \(pointer); courier merges into a file of its records only, and leaves this one as it is"
            case .unsorted: "the file is not sorted by key"
            case .malformed(let what): "a part is damaged (\(what))"
            }
        }
    }

    private let limits: Limits
    private let makeScratch: () throws(FileError) -> Int32
    private var arena: UnsafeMutableRawBufferPointer
    private var used = 0
    /// The lines of the current run, in arrival order: where each starts, its tab, its end.
    private var entries: [(start: Int, tab: Int, end: Int)] = []
    /// Spilled runs, oldest first.
    private var runs: [Int32] = []
    private(set) var summary = Summary()

    /// - Parameter makeScratch: a new empty file, already unlinked (``ScratchFile``).
    init(limits: Limits = Limits(), makeScratch: @escaping () throws(FileError) -> Int32) {
        self.limits = limits
        self.makeScratch = makeScratch
        arena = .allocate(byteCount: 1 << 16, alignment: 1)
    }

    deinit {
        arena.deallocate()
        for var run in runs { POSIX.close(&run) }
    }

    /// Adds one part line (`+KEY<TAB>RECORD` or `-KEY<TAB>`), after every line added before.
    func add(_ line: UnsafeRawBufferPointer) throws(Failure) {
        guard let first = line.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-"),
            let tab = line.firstIndex(of: 0x09), tab > 1
        else {
            throw .malformed(
                "a line starts \"\(String(decoding: line.prefix(40), as: UTF8.self))\"")
        }
        if used + line.count > arena.count {
            var size = arena.count
            while size < used + line.count { size *= 2 }
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
            larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: arena[..<used]))
            arena.deallocate()
            arena = larger
        }
        UnsafeMutableRawBufferPointer(rebasing: arena[used..<(used + line.count)]).copyMemory(
            from: line)
        entries.append((used, used + tab, used + line.count))
        used += line.count
        summary.added += 1
        if used + entries.count * 40 >= limits.runBytes { try spill() }
    }

    /// Writes the merged file into `output`: `existing` (the records file, sorted by key; its
    /// lines are kept byte for byte unless replaced) under every line added. Throws
    /// ``Failure/unsorted`` when `existing` is out of order, having written part of the output:
    /// the caller starts again with ``addExisting(_:path:pointer:)`` (``merge(…)`` does).
    func finish(existing: LineInput?, path: String, pointer: String, into output: LineOutput)
        throws(Failure) -> Summary
    {
        var sources: [MergeSource] = []
        if let existing {
            sources.append(MergeSource(existing: existing, path: path, pointer: pointer))
        }
        if runs.count + 1 > limits.fanIn { try reduceRuns() }
        for run in runs { sources.append(try MergeSource(run: run)) }
        sources.append(MergeSource(memory: sortedRun()))
        let (written, removed) = try Self.merge(
            sources, pointer: pointer, into: output, final: true)
        summary.written = written
        summary.removed = removed
        do { try output.flush() } catch { throw .file(error) }
        return summary
    }

    /// Adds every line of an existing records file as the oldest records (for a file that is
    /// not sorted): each needs its key.
    func addExisting(_ input: LineInput, path: String, pointer: String) throws(Failure) {
        let scanner = RecordKeyScanner(pointer: pointer)
        var line: [UInt8] = []
        while let next = try Self.read(input) {
            guard !next.isEmpty else { continue }
            guard let key = scanner.key(in: next) else {
                throw .existingLine(number: input.lineNumber, path: path, pointer: pointer)
            }
            line.removeAll(keepingCapacity: true)
            line.append(UInt8(ascii: "+"))
            line.append(contentsOf: key)
            line.append(0x09)
            line.append(contentsOf: next)
            try line.withUnsafeBytes { raw in
                Result { () throws(Failure) in try add(raw) }
            }.get()
            summary.added -= 1
        }
    }

    private static func read(_ input: LineInput) throws(Failure) -> UnsafeRawBufferPointer? {
        do { return try input.next() } catch { throw .file(error) }
    }

    /// A whole merge into the file open at `output` (empty): the records file at `existing`
    /// (open for reading, or `nil` when there is none) under the part lines `feed` adds. When
    /// the file turns out not to be sorted by key (written by hand, or by an earlier `append`),
    /// the output is emptied and the file's lines go through the sort too, as the oldest.
    static func merge(
        existing: Int32?, path: String, pointer: String, into output: Int32,
        limits: Limits = Limits(), makeScratch: @escaping () throws(FileError) -> Int32,
        feed: (RecordsMerge) throws(Failure) -> Void
    ) throws(Failure) -> Summary {
        let merge = RecordsMerge(limits: limits, makeScratch: makeScratch)
        try feed(merge)
        let input = existing.map { LineInput(descriptor: $0, path: path) }
        do {
            return try merge.finish(
                existing: input, path: path, pointer: pointer,
                into: LineOutput(descriptor: output, path: "the merged file"))
        } catch .unsorted {
            guard let existing else { throw .unsorted }
            guard ftruncate(output, 0) == 0, lseek(output, 0, SEEK_SET) == 0,
                lseek(existing, 0, SEEK_SET) == 0
            else {
                throw .file(FileError(path: path, action: "merge again into", code: errno))
            }
            let slow = RecordsMerge(limits: limits, makeScratch: makeScratch)
            try slow.addExisting(
                LineInput(descriptor: existing, path: path), path: path, pointer: pointer)
            try feed(slow)
            return try slow.finish(
                existing: nil, path: path, pointer: pointer,
                into: LineOutput(descriptor: output, path: "the merged file"))
        }
    }

    // MARK: - Runs

    /// The current run's entries sorted by key, the last of each key kept (by arrival).
    private func sortedRun() -> MemoryRun {
        let base = UnsafeRawBufferPointer(arena)
        let entries = self.entries
        var order = Array(entries.indices)
        order.sort { left, right in
            let a = entries[left]
            let b = entries[right]
            let order = RecordKey.compare(
                UnsafeRawBufferPointer(rebasing: base[(a.start + 1)..<a.tab]),
                UnsafeRawBufferPointer(rebasing: base[(b.start + 1)..<b.tab]))
            return order != 0 ? order < 0 : left < right
        }
        var kept: [Int] = []
        kept.reserveCapacity(order.count)
        for index in order {
            if let last = kept.last {
                let a = entries[last]
                let b = entries[index]
                if RecordKey.compare(
                    UnsafeRawBufferPointer(rebasing: base[(a.start + 1)..<a.tab]),
                    UnsafeRawBufferPointer(rebasing: base[(b.start + 1)..<b.tab])) == 0
                {
                    kept[kept.count - 1] = index  // the later one of the key wins
                    continue
                }
            }
            kept.append(index)
        }
        return MemoryRun(base: base, entries: kept.map { entries[$0] })
    }

    /// Sorts the current run into a scratch file and starts an empty one.
    private func spill() throws(Failure) {
        let run = sortedRun()
        let descriptor: Int32
        do { descriptor = try makeScratch() } catch { throw .file(error) }
        runs.append(descriptor)
        let output = LineOutput(descriptor: descriptor, path: "a sorted run")
        do {
            for entry in run.entries {
                try output.writeLine(
                    UnsafeRawBufferPointer(rebasing: run.base[entry.start..<entry.end]))
            }
            try output.flush()
        } catch { throw .file(error) }
        rewind(descriptor)
        entries.removeAll(keepingCapacity: true)
        used = 0
        summary.spilled += 1
    }

    /// Merges spilled runs in groups of ``Limits/fanIn`` (tombstones kept) until they and the
    /// run in memory can be merged at once. Consecutive runs stay in arrival order.
    private func reduceRuns() throws(Failure) {
        while runs.count + 1 > limits.fanIn {
            var merged: [Int32] = []
            for group in stride(from: 0, to: runs.count, by: limits.fanIn) {
                let members = Array(runs[group..<min(group + limits.fanIn, runs.count)])
                guard members.count > 1 else {
                    merged.append(contentsOf: members)
                    continue
                }
                let descriptor: Int32
                do { descriptor = try makeScratch() } catch { throw .file(error) }
                let output = LineOutput(descriptor: descriptor, path: "a sorted run")
                var sources: [MergeSource] = []
                for member in members { sources.append(try MergeSource(run: member)) }
                _ = try Self.merge(sources, pointer: "", into: output, final: false)
                do { try output.flush() } catch { throw .file(error) }
                rewind(descriptor)
                sources.removeAll()
                for var member in members { POSIX.close(&member) }
                merged.append(descriptor)
            }
            runs = merged
        }
    }

    private func rewind(_ descriptor: Int32) { lseek(descriptor, 0, SEEK_SET) }

    // MARK: - Merging

    /// Merges sorted `sources` (later ones win a key) into `output`: records only when
    /// `final` (tombstones then remove their key), else part lines. Returns the lines written
    /// and the keys of the existing file removed.
    private static func merge(
        _ sources: [MergeSource], pointer: String, into output: LineOutput, final: Bool
    ) throws(Failure) -> (written: Int, removed: Int) {
        var heap = MergeHeap(sources: sources.enumerated().map { ($1, $0) })
        try heap.start()
        var written = 0
        var removed = 0
        var key: [UInt8] = []
        while let top = heap.top {
            let winner = top.source
            key.removeAll(keepingCapacity: true)
            key.append(contentsOf: winner.key)
            var coversExisting = winner.isExisting
            do {
                if final {
                    if !winner.isTombstone {
                        try output.writeLine(winner.record)
                        written += 1
                    }
                } else {
                    try output.writeLine(winner.line)
                    written += 1
                }
            } catch { throw .file(error) }
            try heap.advanceTop()
            // Every older line of the same key loses.
            while let next = heap.top,
                key.withUnsafeBytes({ RecordKey.compare($0, next.source.key) }) == 0
            {
                coversExisting = coversExisting || next.source.isExisting
                try heap.advanceTop()
            }
            if final, winner.isTombstone, coversExisting { removed += 1 }
        }
        return (written, removed)
    }
}
