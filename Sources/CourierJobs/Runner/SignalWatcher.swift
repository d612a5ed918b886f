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
    private let received = Locked<Int32?>(nil)

    /// The first signal received, if any.
    var signal: Int32? { received.withLock { $0 } }

    init(onSignal: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM] {
            _ = setDisposition(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in
                let first = received.withLock { value -> Bool in
                    defer { if value == nil { value = number } }
                    return value == nil
                }
                if first { onSignal(number) }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Restores the default handlers.
    func stop() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { _ = setDisposition(number, SIG_DFL) }
    }
}
