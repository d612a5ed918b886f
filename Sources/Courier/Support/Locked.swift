import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a lock: state that synchronous code on any thread (libcurl's loop,
/// URLSession's delegate queue, a Dispatch timer) and Swift tasks both touch, in critical
/// sections short enough that an actor's hop would cost more than the lock. Never hold it
/// across an `await`, and resume continuations after leaving it.
///
/// The mutex is a pthread mutex of its own, not `NSLock`: on Linux it is the adaptive kind,
/// which spins briefly before it sleeps. The run's two curl loops take some of these locks
/// for every task (the task feed, the host throttles), each for a microsecond or two, and
/// with `NSLock` (a mutex that sleeps at once) a collision cost two futex calls and a
/// context switch (docs/benchmarks.md).
package final class Locked<Value>: @unchecked Sendable {
    private let mutex = AdaptiveMutex()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }
}

/// A pthread mutex, the adaptive kind on Linux; for classes that guard several fields
/// with one lock (``Locked`` holds one value).
package struct AdaptiveMutex: ~Copyable, @unchecked Sendable {
    // Safe: the pointer is the mutex's one home, and pthread mutexes are made to be shared
    // between threads.
    private let pointer: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        pointer = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(pointer, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(pointer)
        pointer.deallocate()
    }

    package func lock() { pthread_mutex_lock(pointer) }

    package func unlock() { pthread_mutex_unlock(pointer) }

    /// Runs `body` with the mutex held.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
