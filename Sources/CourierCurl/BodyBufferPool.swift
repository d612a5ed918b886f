import Courier
import Foundation

/// Recycles large response-body buffers for one client.
///
/// glibc serves allocations of 128 KiB and more with fresh `mmap`s, so every large response
/// paid for zero-filling its pages and unmapping them again: measured at more than half the CPU
/// of a 1 MiB transfer. Buffers come from here instead and return when the caller drops the
/// `Data` that wraps them. The pool keeps at most `limit` bytes idle.
final class BodyBufferPool: @unchecked Sendable {
    /// Bodies smaller than this use ordinary `Data` growth.
    static let minimumSize = 128 << 10

    private let limit: Int
    private let state = Locked<(idle: [Int: [UnsafeMutableRawPointer]], idleBytes: Int)>(([:], 0))

    init(limit: Int) { self.limit = limit }

    deinit {
        state.withLock { state in
            for buffers in state.idle.values { buffers.forEach { free($0) } }
        }
    }

    /// The size class that holds `count` bytes: the next power of two.
    static func sizeClass(for count: Int) -> Int {
        max(minimumSize, 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount))
    }

    /// A buffer of at least `count` bytes, and its size class.
    func take(_ count: Int) -> (UnsafeMutableRawPointer, Int) {
        let size = Self.sizeClass(for: count)
        let reused = state.withLock { state -> UnsafeMutableRawPointer? in
            guard let buffer = state.idle[size]?.popLast() else { return nil }
            state.idleBytes -= size
            return buffer
        }
        return (reused ?? malloc(size)!, size)
    }

    /// Returns a buffer taken with `take`.
    func give(_ buffer: UnsafeMutableRawPointer, size: Int) {
        let kept = state.withLock { state -> Bool in
            guard state.idleBytes + size <= limit else { return false }
            state.idle[size, default: []].append(buffer)
            state.idleBytes += size
            return true
        }
        if !kept { free(buffer) }
    }

    /// Wraps `count` bytes of a pooled buffer as `Data` that gives the buffer back when freed.
    func data(_ buffer: UnsafeMutableRawPointer, count: Int, size: Int) -> Data {
        Data(
            bytesNoCopy: buffer, count: count,
            deallocator: .custom { [self] pointer, _ in
                give(pointer, size: size)
            })
    }
}
