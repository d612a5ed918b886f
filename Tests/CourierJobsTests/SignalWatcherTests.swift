import Foundation
import Testing

@testable import CourierJobs

#if canImport(Glibc)
    import Glibc
#endif

/// `JobRunner` is public and may run inside a program with signal handlers of its own: the
/// watcher puts back what was there, not the defaults.
@Suite("SignalWatcher")
struct SignalWatcherTests {
    /// SIGUSR1 stands for SIGINT: handlers are process-wide, and the runs other tests start in
    /// this process install and restore SIGINT's while this one looks at it (it failed so
    /// under a loaded parallel run).
    @Test("stop() restores the handlers that were in place before")
    func restoresPreviousHandlers() {
        let mine: @convention(c) (Int32) -> Void = { _ in }
        let saved = signal(SIGUSR1, mine)
        defer { _ = signal(SIGUSR1, saved) }
        let watcher = SignalWatcher(signals: [SIGUSR1], onSignal: { _ in })
        watcher.stop()
        let now = signal(SIGUSR1, saved)
        #expect(
            now.map { unsafeBitCast($0, to: Int.self) } == unsafeBitCast(mine, to: Int.self),
            "the program's own handler is back, not SIG_DFL")
    }
}
