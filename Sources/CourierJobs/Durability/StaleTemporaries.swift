import Courier
import Foundation

/// Removes the temporary files a killed run left beside its saved outputs and its conditional
/// state (`.name.XXXXXXXX.tmp`, see ``FileReplacement``): each folder a run writes into is
/// looked at once, before its first write there.
///
/// A run writes its temporaries with its job's ``tag`` (`.name.TAG.XXXXXXXX.tmp`), a shard with
/// its shard's (`TAGs1of3`). A run of the whole job holds the job's lock exclusively
/// (``JobLock``), so no other run of the job is writing: it removes the job's leftovers at
/// once, every shard's included. A shard holds its own shard's lock exclusively, beside its
/// siblings, which may be writing theirs right now: it removes its own shard's at once (a
/// trial saw a killed shard's temporaries stay through its resume and its next run), and
/// leaves its siblings' to the one-hour rule. Any other temporary (another job's, sharing the
/// folder, or an untagged one) goes only once it is older than ``minimumAge``: its writer may
/// be at work right now, and a file being written is never an hour old.
final class StaleTemporaries: Sendable {
    static let minimumAge: TimeInterval = 3600

    /// The tag of this run's temporaries, or `nil` for a run without a lock (`--log-dir -`),
    /// whose temporaries keep the untagged name and the one-hour rule.
    let tag: String?
    /// Whether its tag is the whole job's, whose run removes every shard's too.
    private let wholeJob: Bool
    /// Folders swept, under a lock held for the whole sweep: no task of this run may create
    /// its own tagged temporary in a folder while the folder's sweep could still remove it.
    /// By path, and by the folder's device and inode: a folder reached by another spelling (a
    /// link to it) is swept once, before this run's saves there began (trial MMM: its second
    /// spelling's sweep removed a temporary this run was writing).
    private let swept = Locked<(paths: Set<String>, folders: Set<[UInt64]>)>(([], []))
    private let now: @Sendable () -> Date
    /// Told of the files a sweep removed, once per folder: its path and their names (a
    /// killed run with 64 saves in flight had a line printed for each).
    private let removed: @Sendable (_ folder: String, _ names: [String]) -> Void

    init(
        tag: String? = nil,
        now: @escaping @Sendable () -> Date = Date.init,
        removed: @escaping @Sendable (_ folder: String, _ names: [String]) -> Void
    ) {
        self.tag = tag
        wholeJob = tag.map { Self.shardPart(of: $0) == nil } ?? false
        self.now = now
        self.removed = removed
    }

    /// The tag of a job's temporaries: eight lower-case hex digits (the random part of the name
    /// is upper-case) of a hash of what the job's lock is on: its output folder, and its name.
    /// A shard's adds its place (`s1of3`), as its lock does.
    static func tag(outputDir: URL, job: String, shard: (index: Int, count: Int)? = nil) -> String {
        let identity = outputDir.standardizedFileURL.path + "/" + job
        let value = FNV1a.hash(identity.utf8)
        let tag = String(String(UInt32(truncatingIfNeeded: value ^ (value >> 32)), radix: 16))
            .leftPadded(to: 8)
        return shard.map { "\(tag)s\($0.index)of\($0.count)" } ?? tag
    }

    /// Folders whose removals get a line each; after them, one line says there were more.
    static let foldersNamed = 5

    /// The line that says a sweep removed `names` from `folder`, the `nth` with
    /// removals in the run (1 for the first): one file by its path; more by their count and
    /// the first three names. Past ``foldersNamed`` folders, one line says more follow, then
    /// none.
    static func removal(in folder: String, names: [String], nth number: Int) -> String? {
        guard number <= foldersNamed else {
            return number == foldersNamed + 1
                ? "courier: removing more temporary files left by an interrupted run, in other folders (not listed)"
                : nil
        }
        return removal(in: folder, names: names)
    }

    /// The line that says a sweep removed `names` from `folder`: one file by its path; more
    /// by their count and the first three names.
    static func removal(in folder: String, names: [String]) -> String {
        guard names.count > 1 else {
            return "courier: removed \(folder)/\(names.first ?? ""), left by an interrupted run"
        }
        let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
        return
            "courier: removed \(names.count) temporary files in \(folder), left by an interrupted run (\(shown))"
    }

    /// The shard part of a tag (`s1of3` of `0a1b2c3ds1of3`), or `nil` for a whole job's.
    private static func shardPart(of tag: Substring) -> Substring? {
        guard tag.utf8.count > 8 else { return nil }
        let rest = tag.dropFirst(8)
        let parts = rest.dropFirst().split(separator: "of", omittingEmptySubsequences: false)
        guard rest.first == "s", parts.count == 2,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })
        else { return nil }
        return rest
    }

    private static func shardPart(of tag: String) -> Substring? { shardPart(of: tag[...]) }

    /// Sweeps `folder`, unless this run has already. (Runs for every save: one look-up in a
    /// set; the folder's path is already resolved by ``OutputPath``.)
    func sweep(_ folder: URL) {
        sweep(atPath: folder.path)
    }

    /// Sweeps the folder at `path`, unless this run has already.
    func sweep(atPath path: String) {
        swept.withLock { swept in
            guard swept.paths.insert(path).inserted else { return }
            var status = stat()
            if stat(path, &status) == 0,
                !swept.folders.insert([UInt64(status.st_dev), UInt64(status.st_ino)]).inserted
            {
                return
            }
            removeLeftovers(in: path)
        }
    }

    private func removeLeftovers(in path: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            return
        }
        let cutoff = now().addingTimeInterval(-Self.minimumAge)
        var gone: [String] = []
        defer { if !gone.isEmpty { removed(path, gone.sorted()) } }
        for name in names where Self.isTemporaryName(name) {
            let file = path + "/" + name
            // Attributes of the entry itself: a symbolic link of that name is not ours.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let modified = attributes[.modificationDate] as? Date,
                modified < cutoff || isOwn(name)
            else { continue }
            if unlink(file) == 0 { gone.append(name) }
        }
    }

    /// Whether the temporary `name` is this run's to remove at once: tagged with its tag, or,
    /// for a run of the whole job, with one of its shards'.
    private func isOwn(_ name: String) -> Bool {
        guard let tag else { return false }
        if Self.isTemporaryName(name, taggedWith: tag) { return true }
        guard wholeJob, Self.isTemporaryName(name) else { return false }
        // `.name.TAGs1of3.XXXXXXXX.tmp`: the part before the random one.
        let head = name.dropLast(13)
        guard let dot = head.lastIndex(of: ".") else { return false }
        let found = head[head.index(after: dot)...]
        return found.hasPrefix(tag) && Self.shardPart(of: found) != nil
    }

    /// `.name.XXXXXXXX.tmp` with eight upper-case hex digits, as ``FileReplacement`` names them
    /// (`.name.TAG.XXXXXXXX.tmp` included).
    static func isTemporaryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count > 15, bytes[0] == UInt8(ascii: "."),
            name.hasSuffix(".tmp")
        else { return false }
        let suffix = bytes[(bytes.count - 13)...]  // ".XXXXXXXX.tmp"
        guard suffix.first == UInt8(ascii: ".") else { return false }
        return suffix.dropFirst().prefix(8).allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte)
        }
    }

    /// `.name.TAG.XXXXXXXX.tmp`: a temporary written with `tag`.
    static func isTemporaryName(_ name: String, taggedWith tag: String) -> Bool {
        let marker = "." + tag
        let bytes = Array(name.utf8)
        guard isTemporaryName(name), bytes.count > 14 + marker.utf8.count else { return false }
        return bytes[..<(bytes.count - 13)].reversed().starts(with: marker.utf8.reversed())
    }
}
