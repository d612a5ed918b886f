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
    @Test("stop() restores the handlers that were in place before")
    func restoresPreviousHandlers() {
        let mine: @convention(c) (Int32) -> Void = { _ in }
        let before = signal(SIGUSR2, SIG_DFL)  // unused by the watcher: a control
        defer { _ = signal(SIGUSR2, before) }
        let saved = signal(SIGINT, mine)
        defer { _ = signal(SIGINT, saved) }
        let watcher = SignalWatcher(onSignal: { _ in })
        watcher.stop()
        let now = signal(SIGINT, saved)
        #expect(
            now.map { unsafeBitCast($0, to: Int.self) } == unsafeBitCast(mine, to: Int.self),
            "the program's own handler is back, not SIG_DFL")
    }
}
