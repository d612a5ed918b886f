import Courier
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    private let setDisposition = Glibc.signal
#elseif canImport(Darwin)
    private let setDisposition = Darwin.signal
#endif

/// Turns SIGINT and SIGTERM into a callback instead of an abrupt exit, so a run can stop
/// scheduling, finish or cancel what is in flight, and still write `run.end`.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    /// The handlers in place before, put back by ``stop()``: `JobRunner` may run
    /// inside a program with handlers of its own.
    private var previous: [(Int32, (@convention(c) (Int32) -> Void)?)] = []
    /// The first signal, and how many have come.
    private let received = Locked<(first: Int32?, count: Int)>((nil, 0))

    /// The first signal received, if any.
    var signal: Int32? { received.withLock { $0.first } }

    /// - Parameters:
    ///   - signals: the signals watched: SIGINT and SIGTERM (a test picks one no other test
    ///     in its process touches: handlers are process-wide).
    ///   - onSignal: called for the first signal.
    ///   - onRepeat: called for each one after it (an impatient second Ctrl-C).
    init(
        signals: [Int32] = [SIGINT, SIGTERM],
        onSignal: @escaping @Sendable (Int32) -> Void,
        onRepeat: @escaping @Sendable (Int32) -> Void = { _ in }
    ) {
        for number in signals {
            previous.append((number, setDisposition(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in
                let first = received.withLock { state -> Bool in
                    state.count += 1
                    if state.first == nil { state.first = number }
                    return state.count == 1
                }
                if first { onSignal(number) } else { onRepeat(number) }
            }
            // Dispatch installs its own handler when it registers the source, on a queue of
            // its own: waited for, so that it can never come after ``stop()`` put the
            // program's handler back (a test caught it so, under load).
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            _ = registered.wait(timeout: .now() + 10)
            sources.append(source)
        }
    }

    /// Puts back the handlers that were in place before, once every source is cancelled.
    func stop() {
        let cancelled = DispatchSemaphore(value: 0)
        for source in sources {
            source.setCancelHandler { cancelled.signal() }
            source.cancel()
        }
        for _ in sources { _ = cancelled.wait(timeout: .now() + 10) }
        sources = []
        for (number, handler) in previous { _ = setDisposition(number, handler) }
        previous = []
    }
}
