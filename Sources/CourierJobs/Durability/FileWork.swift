import Courier
import Dispatch
import Foundation

/// A run's few threads for blocking file work: a save's write, `fsync`s and rename, a
/// temporary's creation or removal, the sweep of a folder, the conditional state's journal.
///
/// With curl, a run's tasks run on the transport's event-loop threads (``TaskSlots``), and
/// anything a task does synchronously stalls every transfer of its loop. A save's `fsync`
/// took 0.35 ms at the median and 178 ms at worst on a real server, and a 6,006-request
/// fan-out took half as long again with `save` as without. So a task hands such work here and
/// is resumed on its loop when it is done, while the loop goes on with other transfers.
///
/// Serial queues taken in turn: at most ``width`` files are synced at once, whatever the
/// concurrency, and a slow disk holds up saves, never transfers. Owned by the run: its queues
/// go with it.
final class FileWork: Sendable {
    private let queues: [DispatchQueue]
    private let turn = Locked(0)

    /// The threads a run uses: `fsync` waits on the disk, not a core, so a few more than
    /// two cores' worth keep one slow sync from holding up every save behind it.
    static let width = 4

    init(width: Int = FileWork.width) {
        queues = (0..<max(1, width)).map { DispatchQueue(label: "courier-files-\($0)") }
    }

    /// Runs `body` on one of the file-work threads and returns what it returned (or throws
    /// what it threw); the calling task waits without blocking its thread.
    ///
    /// - Parameter folder: the folder `body` creates files in, if any: the work for one folder
    ///   goes to one thread. A file's creation takes its folder's lock in the kernel, and
    ///   saves into one folder from every thread at once spun on that lock there.
    func run<T: Sendable, E: Error>(
        in folder: String? = nil, _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let index =
            if let folder {
                Int(FNV1a.hash(folder.utf8) % UInt64(queues.count))
            } else {
                turn.withLock { turn in
                    defer { turn = (turn + 1) % queues.count }
                    return turn
                }
            }
        let queue = queues[index]
        let result = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(E) -> T in try body() })
            }
        }
        return try result.get()
    }
}
