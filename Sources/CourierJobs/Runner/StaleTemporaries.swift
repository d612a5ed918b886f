import Courier
import Foundation

/// Removes the temporary files a killed run left beside its saved outputs
/// (`.name.XXXXXXXX.tmp`, see ``FileReplacement``): each folder a run saves into is looked at
/// once, before its first save, and a temporary there older than ``minimumAge`` goes.
///
/// The age is what keeps another run's file safe: a job sharing the folder may be writing its
/// own temporary right now, and a file being written is never an hour old.
final class StaleTemporaries: Sendable {
    static let minimumAge: TimeInterval = 3600

    private let swept = Locked<Set<String>>([])
    private let now: @Sendable () -> Date
    /// Told of each file removed.
    private let removed: @Sendable (String) -> Void

    init(
        now: @escaping @Sendable () -> Date = Date.init,
        removed: @escaping @Sendable (String) -> Void
    ) {
        self.now = now
        self.removed = removed
    }

    /// Sweeps `folder`, unless this run has already. (Runs for every save: one look-up in a
    /// set; the folder's path is already resolved by ``OutputPath``.)
    func sweep(_ folder: URL) {
        let path = folder.path
        guard swept.withLock({ $0.insert(path).inserted }) else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            return
        }
        let cutoff = now().addingTimeInterval(-Self.minimumAge)
        for name in names where Self.isTemporaryName(name) {
            let file = path + "/" + name
            // Attributes of the entry itself: a symbolic link of that name is not ours.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let modified = attributes[.modificationDate] as? Date, modified < cutoff
            else { continue }
            if unlink(file) == 0 { removed(file) }
        }
    }

    /// `.name.XXXXXXXX.tmp` with eight upper-case hex digits, as ``FileReplacement`` names them.
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
}
