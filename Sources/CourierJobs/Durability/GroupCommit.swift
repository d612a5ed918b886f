import Courier
import Foundation

/// Saves made durable together (group commit), so that many small saves cost about as much
/// disk work as one.
///
/// A save's body is written whole into its temporary (``FileReplacement``) on a file-work
/// thread, then handed to ``commit(_:)``. The saves handed in while a batch is being
/// committed form the next batch, committed in this order:
/// 1. the batch's bytes made durable: one `syncfs` of each file system it writes to (a lone
///    save: its own `fsync`, which costs less than syncing everything);
/// 2. each save renamed over its target (each folder checked once for the batch: still where
///    its path leads);
/// 3. each folder the batch renamed into `fsync`ed once.
///
/// Only then are the saves' callers resumed, and only then do they write their `ok` lines. A
/// rename comes after its bytes are on disk, so a crash at any point leaves each target as it
/// was or whole, never half-written, and no `ok` line stands for a save a crash could take
/// back. A save waits at most for the batch that was being committed when it came, then for
/// its own: no timer holds a line back, and one save alone costs what it did before (a file
/// and a folder `fsync`).
final class GroupCommit: Sendable {
    /// How a batch is made durable: the system's calls, or a test's that count them.
    struct Syncs: Sendable {
        /// One file's bytes (a batch of one).
        var bytes: @Sendable (FileReplacement) throws(FileError) -> Void
        /// Every file's bytes on the replacement's file system.
        var fileSystem: @Sendable (FileReplacement) throws(FileError) -> Void
        /// The renames in the replacement's folder.
        var folder: @Sendable (FileReplacement) -> Void

        static let system = Syncs(
            bytes: { replacement throws(FileError) in try replacement.syncBytes() },
            fileSystem: { replacement throws(FileError) in try replacement.syncFileSystem() },
            folder: { $0.syncFolder() })
    }

    private struct Waiting {
        let replacement: FileReplacement
        let continuation: CheckedContinuation<FileError?, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var committing = false
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "courier-group-commit")
    private let syncs: Syncs

    init(syncs: Syncs = .system) {
        self.syncs = syncs
    }

    /// Saves waiting for the next batch (tests wait for their saves with it).
    var waiting: Int { state.withLock { $0.waiting.count } }

    /// Puts `replacement` (its bytes written) in its target's place durably, with the other
    /// saves of its batch; returns once its bytes, its rename and its folder are on disk. On
    /// failure the temporary is removed and the target is as it was.
    func commit(_ replacement: FileReplacement) async throws(FileError) {
        let failure = await withCheckedContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.waiting.append(Waiting(replacement: replacement, continuation: continuation))
                guard !state.committing else { return false }
                state.committing = true
                return true
            }
            if start { queue.async { self.drain() } }
        }
        if let failure { throw failure }
    }

    /// Commits batches until no save waits.
    private func drain() {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                defer { state.waiting = [] }
                if state.waiting.isEmpty { state.committing = false }
                return state.waiting
            }
            guard !batch.isEmpty else { return }
            let failures = commitBatch(batch.map(\.replacement))
            for (waiting, failure) in zip(batch, failures) {
                waiting.continuation.resume(returning: failure)
            }
        }
    }

    /// One batch: bytes, renames, folders; each save's failure, in the batch's order.
    private func commitBatch(_ batch: [FileReplacement]) -> [FileError?] {
        var failures = [FileError?](repeating: nil, count: batch.count)
        let folders = batch.map(\.folderIdentity)
        if batch.count == 1 {
            do throws(FileError) { try syncs.bytes(batch[0]) } catch { failures[0] = error }
        } else {
            var synced: [UInt64: FileError?] = [:]
            for (index, replacement) in batch.enumerated() {
                let device = folders[index].device
                if synced[device] == nil {
                    do throws(FileError) {
                        try syncs.fileSystem(replacement)
                        synced[device] = .some(nil)
                    } catch {
                        synced[device] = .some(error)
                    }
                }
                failures[index] = synced[device] ?? nil
            }
        }
        // Each folder is checked once for the batch (still where its path leads), not once
        // per save: this thread renames every save, and a path's walk per save held them up.
        struct Checked: Hashable {
            let path: String
            let folder: FileReplacement.FolderIdentity
        }
        var moved: [Checked: FileError?] = [:]
        var renamedInto: [FileReplacement.FolderIdentity: FileReplacement] = [:]
        for (index, replacement) in batch.enumerated() {
            let folder = folders[index]
            if failures[index] == nil {
                let key = Checked(path: replacement.folderPath, folder: folder)
                if moved[key] == nil { moved[key] = .some(replacement.folderMoved()) }
                failures[index] = moved[key] ?? nil
            }
            if failures[index] != nil {
                replacement.discard()
                continue
            }
            do throws(FileError) {
                try replacement.commit(
                    syncingFile: false, syncingFolder: false, checkingFolder: false)
                if renamedInto[folder] == nil { renamedInto[folder] = replacement }
            } catch {
                failures[index] = error
            }
        }
        for replacement in renamedInto.values { syncs.folder(replacement) }
        return failures
    }
}
