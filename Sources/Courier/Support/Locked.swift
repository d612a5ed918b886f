import Foundation

/// A value guarded by a lock: state that synchronous code on any thread (libcurl's loop,
/// URLSession's delegate queue, a Dispatch timer) and Swift tasks both touch, in critical
/// sections short enough that an actor's hop would cost more than the lock. Never hold it
/// across an `await`, and resume continuations after leaving it.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
