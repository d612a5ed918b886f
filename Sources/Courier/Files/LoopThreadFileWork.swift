import Foundation

/// The name of the curl transport's event-loop threads, set by `CourierCurl` and read here,
/// so that a debug build can tell when a file is synced or renamed on one.
package let curlLoopThreadName = "courier-curl"

#if DEBUG
    /// Debug builds only: the blocking file work (``FileReplacement``'s create, write, sync
    /// and rename, discard) done on a curl event-loop thread, which stalls every transfer of
    /// that loop. Tests read it to prove a caller keeps such work off the loops; a release
    /// build records nothing and pays nothing.
    package enum LoopThreadFileWork {
        /// `"action path"` per kind of step and file seen on a loop thread: a file's many
        /// chunk writes are one entry, so that a check made late still finds its file while
        /// other work (the library's own `download` on curl writes from the loop, a chunk at a
        /// time) goes on beside it. Emptied at 100,000 files, which a test process never nears.
        package static let seen = Locked<Set<String>>([])

        static func note(_ action: String, _ path: String) {
            guard isCurlLoopThread else { return }
            seen.withLock { seen in
                if seen.count >= 100_000 { seen.removeAll() }
                seen.insert("\(action) \(path)")
            }
        }

        /// Whether the calling thread is named as the curl loops are (Foundation's name:
        /// the loops are `Thread`s; Glibc's module has no `pthread_getname_np`).
        package static var isCurlLoopThread: Bool {
            Thread.current.name == curlLoopThreadName
        }
    }
#endif
