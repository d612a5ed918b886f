import Courier
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes renames durable by `fsync`ing their folder, one sync for every rename made in the
/// folder before it started (group commit).
///
/// A save is its file's `fsync`, a rename, then the folder's `fsync`, which makes the rename
/// itself survive a crash. Fanned-out saves rename many files into one folder at once, and one
/// folder sync covers them all: ``sync(_:)`` returns once a sync of the folder that *started
/// after the call* has finished, so the caller's rename is on disk, and the callers that came
/// while a sync ran share the next one. 6,000 saves into one folder cost 12,000 `fsync`s
/// before; with the folder's shared, about half.
final class FolderSyncs: Sendable {
    private struct Folder {
        /// Syncs started and finished so far; a sync covers every rename made before it
        /// started.
        var started: UInt64 = 0
        var running = false
        /// Callers waiting for the sync numbered `target` (or a later one) to finish.
        var waiters: [(target: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let folders = Locked<[String: Folder]>([:])
    private let queue: DispatchQueue
    private let syncFolder: @Sendable (String) -> Void

    /// - Parameter syncFolder: the sync itself (tests count and time it).
    init(
        queue: DispatchQueue = DispatchQueue(label: "courier-folder-sync", attributes: .concurrent),
        syncFolder: @escaping @Sendable (String) -> Void = FolderSyncs.fsyncFolder
    ) {
        self.queue = queue
        self.syncFolder = syncFolder
    }

    /// `fsync` of the folder at `path` (a folder that cannot be opened has nothing to sync:
    /// the save into it already failed).
    static func fsyncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Callers waiting for a sync of `folder` now (tests wait for their callers with it).
    func waiting(in folder: String) -> Int {
        folders.withLock { $0[folder]?.waiters.count ?? 0 }
    }

    /// Returns once `folder` has been synced by a sync that started after this call.
    func sync(_ folder: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let startNow = folders.withLock { folders -> Bool in
                var state = folders[folder, default: Folder()]
                defer { folders[folder] = state }
                state.waiters.append((state.started + 1, continuation))
                guard !state.running else { return false }
                state.running = true
                state.started += 1
                return true
            }
            if startNow { queue.async { self.runSyncs(of: folder) } }
        }
    }

    /// Syncs `folder` until no caller waits for a later sync.
    private func runSyncs(of folder: String) {
        while true {
            let number = folders.withLock { $0[folder]?.started ?? 0 }
            syncFolder(folder)
            let (ready, again) = folders.withLock {
                folders -> ([CheckedContinuation<Void, Never>], Bool) in
                guard var state = folders[folder] else { return ([], false) }
                let ready = state.waiters.filter { $0.target <= number }.map(\.continuation)
                state.waiters.removeAll { $0.target <= number }
                let again = !state.waiters.isEmpty
                if again {
                    state.started += 1
                } else {
                    state.running = false
                }
                folders[folder] = again ? state : nil
                return (ready, again)
            }
            for continuation in ready { continuation.resume() }
            guard again else { return }
        }
    }
}
