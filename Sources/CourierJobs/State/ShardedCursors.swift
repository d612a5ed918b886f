/// The cursor of a `since` task that every shard of a split runs (it captures: each shard
/// fans out its own share of the children), kept per shard.
///
/// Each shard moves its own entry (`ID#shard=I/N` in the cursor file) when its own children
/// ended ok, and a run starts from the least of the split's entries: a shard whose child
/// failed keeps its entry back, so the next night every shard lists from there and the failed
/// item is fetched again, though another shard's children all succeeded. (With one entry for
/// the task, the shard that succeeded moved it past the other shard's failed item for good.)
/// A whole-job run writes the task's own entry and drops the shards' entries it supersedes.
enum ShardedCursors {
    /// The cursor file's key of task `id`'s cursor on `shard`.
    static func key(_ id: String, shard: Shard) -> String { "\(id)#shard=\(shard)" }

    /// The file's entries of task `id` kept per shard, as split size → shard index → value.
    static func entries(of id: String, in file: [String: String]) -> [Int: [Int: String]] {
        let prefix = "\(id)#shard="
        var splits: [Int: [Int: String]] = [:]
        for (key, value) in file where key.hasPrefix(prefix) {
            guard let shard = Shard(String(key.dropFirst(prefix.count))) else { continue }
            splits[shard.count, default: [:]][shard.index] = value
        }
        return splits
    }

    /// The cursors a run starts from: the file's own entries, and for each task in
    /// `everyShard` the least of its shards' entries: those of the run's split (a shard with
    /// no entry yet counts as the task's own entry), or for a whole-job run those of every
    /// split whose shards all have one. Values that `ordered` does not say can be compared (a
    /// header's opaque token) and that differ give the task's own entry.
    static func resolved(
        _ file: [String: String], everyShard: Set<String>, ordered: Set<String>, shard: Shard?
    ) -> [String: String] {
        var cursors = file.filter { !$0.key.contains("#shard=") }
        for id in everyShard {
            let splits = entries(of: id, in: file)
            let values: [String?]
            if let shard {
                guard let split = splits[shard.count] else { continue }
                values = (0..<shard.count).map { split[$0] ?? file[id] }
            } else {
                let whole = splits.filter { count, split in split.count == count }
                guard !whole.isEmpty else { continue }
                values = whole.values.flatMap(\.values)
            }
            cursors[id] = least(values, ordered: ordered.contains(id), own: file[id])
        }
        return cursors
    }

    /// The earliest of `values`; `nil` (the task's start) when one is missing.
    private static func least(_ values: [String?], ordered: Bool, own: String?) -> String? {
        var present: [String] = []
        for value in values {
            guard let value else { return nil }
            present.append(value)
        }
        guard let first = present.first else { return own }
        if present.allSatisfy({ $0 == first }) { return first }
        guard ordered else { return own }
        return present.reduce(first) { SinceRule.isLater($0, than: $1) ? $1 : $0 }
    }

    /// The file keys a whole-job run's new cursor of `id` supersedes: its shards' entries.
    static func superseded(by id: String, in file: [String: String]) -> [String] {
        let prefix = "\(id)#shard="
        return file.keys.filter { $0.hasPrefix(prefix) }
    }
}
