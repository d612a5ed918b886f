import Courier
import Foundation

/// Removes the temporary files a killed run left beside its saved outputs and its conditional
/// state (`.name.XXXXXXXX.tmp`, see ``FileReplacement``): each folder a run writes into is
/// looked at once, before its first write there.
///
/// A run writes its temporaries with its job's ``tag`` (`.name.TAG.XXXXXXXX.tmp`). A run of the
/// whole job holds the job's lock exclusively (``JobLock``), so no other run of the job is
/// writing: it removes the job's leftovers at once, every shard's included. A shard shares the
/// lock with its sibling shards, which may be writing theirs right now, so it keeps the
/// one-hour rule. Any other temporary (another job's, sharing the
/// folder, or an untagged one) goes only once it is older than ``minimumAge``: its writer may
/// be at work right now, and a file being written is never an hour old.
final class StaleTemporaries: Sendable {
    static let minimumAge: TimeInterval = 3600

    /// The tag of this run's temporaries, or `nil` for a run without a lock (`--log-dir -`),
    /// whose temporaries keep the untagged name and the one-hour rule.
    let tag: String?
    /// Whether this run may remove its job's tagged temporaries at once (it holds the job's
    /// lock alone).
    let removesOwnAtOnce: Bool
    /// Folders swept, under a lock held for the whole sweep: no task of this run may create
    /// its own tagged temporary in a folder while the folder's sweep could still remove it.
    private let swept = Locked<Set<String>>([])
    private let now: @Sendable () -> Date
    /// Told of each file removed.
    private let removed: @Sendable (String) -> Void

    init(
        tag: String? = nil, removesOwnAtOnce: Bool = true,
        now: @escaping @Sendable () -> Date = Date.init,
        removed: @escaping @Sendable (String) -> Void
    ) {
        self.tag = tag
        self.removesOwnAtOnce = removesOwnAtOnce
        self.now = now
        self.removed = removed
    }

    /// The tag of a job's temporaries: eight lower-case hex digits (the random part of the name
    /// is upper-case) of a hash of what the job's lock is on: its output folder, and its name.
    static func tag(outputDir: URL, job: String) -> String {
        let identity = outputDir.standardizedFileURL.path + "/" + job
        let value = FNV1a.hash(identity.utf8)
        return String(String(UInt32(truncatingIfNeeded: value ^ (value >> 32)), radix: 16))
            .leftPadded(to: 8)
    }

    /// Sweeps `folder`, unless this run has already. (Runs for every save: one look-up in a
    /// set; the folder's path is already resolved by ``OutputPath``.)
    func sweep(_ folder: URL) {
        sweep(atPath: folder.path)
    }

    /// Sweeps the folder at `path`, unless this run has already.
    func sweep(atPath path: String) {
        swept.withLock { swept in
            guard swept.insert(path).inserted else { return }
            removeLeftovers(in: path)
        }
    }

    private func removeLeftovers(in path: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            return
        }
        let cutoff = now().addingTimeInterval(-Self.minimumAge)
        for name in names where Self.isTemporaryName(name) {
            let file = path + "/" + name
            // Attributes of the entry itself: a symbolic link of that name is not ours.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let modified = attributes[.modificationDate] as? Date,
                modified < cutoff
                    || (removesOwnAtOnce
                        && tag.map({ Self.isTemporaryName(name, taggedWith: $0) }) == true)
            else { continue }
            if unlink(file) == 0 { removed(file) }
        }
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
