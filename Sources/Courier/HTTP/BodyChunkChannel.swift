import Foundation

/// Carries a response body from a transport to the code iterating it
/// (``ResponseBodyDestination/stream(_:)``, made by ``HTTPClient/stream(_:)``).
///
/// The transport offers chunks as they arrive; the reader takes them. When more than
/// `bufferLimit` bytes wait, the channel refuses the next chunk and a transport that can wait
/// (curl pauses the transfer) is told to go on once the reader has taken them, so a slow reader
/// holds the body back instead of letting it fill memory.
public final class BodyChunkChannel: Sendable, Hashable {
    /// What the reader learns first: the final response's head.
    package struct Head: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
    }

    private struct State {
        var head: Result<Head, any Error>?
        var headWaiter: CheckedContinuation<Head, any Error>?
        var chunks: [Data] = []
        var buffered = 0
        var peakBuffered = 0
        var end: Result<Void, any Error>?
        var chunkWaiter: CheckedContinuation<Data?, any Error>?
        /// The transport was refused a chunk and waits for `resume`.
        var paused = false
        var resume: (@Sendable () -> Void)?
        var readerGone = false
    }

    /// Bytes that may wait for the reader before the transport is held back.
    package let bufferLimit: Int
    private let state = Locked(State())

    package init(bufferLimit: Int = 1 << 20) { self.bufferLimit = bufferLimit }

    public static func == (lhs: BodyChunkChannel, rhs: BodyChunkChannel) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Transport side

    /// The most bytes that waited for the reader at once (for tests of the back-pressure).
    package var peakBufferedBytes: Int { state.withLock { $0.peakBuffered } }

    /// Whether the head has gone to the reader.
    package var hasHead: Bool { state.withLock { $0.head != nil } }

    /// Hands the head over (once: a second head, from a retry, is ignored and returns false).
    @discardableResult
    package func deliver(status: Int, headers: HTTPHeaders) -> Bool {
        let (waiter, first) = state.withLock {
            state -> (CheckedContinuation<Head, any Error>?, Bool) in
            guard state.head == nil else { return (nil, false) }
            state.head = .success(Head(status: status, headers: headers))
            defer { state.headWaiter = nil }
            return (state.headWaiter, true)
        }
        waiter?.resume(returning: Head(status: status, headers: headers))
        return first
    }

    /// The transport's answer to a chunk.
    package enum Offer {
        /// Taken.
        case taken
        /// Not taken: too much waits. Offer it again after `resume` is called.
        case full
        /// The reader has gone: stop the transfer.
        case readerGone
    }

    /// Offers a chunk. `canWait` says whether the transport can hold it back (curl can pause;
    /// URLSession cannot, so its chunks are always taken).
    package func offer(
        _ bytes: UnsafeRawBufferPointer, canWait: Bool, resume: (@Sendable () -> Void)? = nil
    )
        -> Offer
    {
        var handOver: (CheckedContinuation<Data?, any Error>, Data)?
        let offer = state.withLock { state -> Offer in
            if state.readerGone { return .readerGone }
            if canWait, state.buffered >= bufferLimit {
                state.paused = true
                state.resume = resume
                return .full
            }
            let chunk = Data(bytes)
            if let waiter = state.chunkWaiter {
                // The reader is waiting: the chunk goes straight to it, outside the lock.
                state.chunkWaiter = nil
                handOver = (waiter, chunk)
            } else {
                state.chunks.append(chunk)
                state.buffered += chunk.count
                state.peakBuffered = max(state.peakBuffered, state.buffered)
            }
            return .taken
        }
        if let (waiter, chunk) = handOver { waiter.resume(returning: chunk) }
        return offer
    }

    /// Ends the body: after the chunks already taken, the reader sees the end or `error`.
    package func finish(_ error: (any Error)? = nil) {
        let (headWaiter, chunkWaiter) = state.withLock { state in
            if state.end == nil { state.end = error.map { .failure($0) } ?? .success(()) }
            if state.head == nil, let error { state.head = .failure(error) }
            defer {
                state.headWaiter = nil
                if state.chunks.isEmpty { state.chunkWaiter = nil }
            }
            return (state.headWaiter, state.chunks.isEmpty ? state.chunkWaiter : nil)
        }
        if let headWaiter {
            if let error {
                headWaiter.resume(throwing: error)
            } else {
                headWaiter.resume(
                    throwing: HTTPError(.network, "the response ended without a head"))
            }
        }
        if let chunkWaiter {
            if let error {
                chunkWaiter.resume(throwing: error)
            } else {
                chunkWaiter.resume(returning: nil)
            }
        }
    }

    // MARK: - Reader side

    /// Waits for the head.
    package func head() async throws -> Head {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Head, any Error>? in
                if let head = state.head { return head }
                state.headWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The next chunk, or `nil` at the end.
    package func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            var resume: (@Sendable () -> Void)?
            let ready = state.withLock { state -> Result<Data?, any Error>? in
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    state.buffered -= chunk.count
                    if state.paused, state.buffered < bufferLimit {
                        state.paused = false
                        resume = state.resume
                        state.resume = nil
                    }
                    return .success(chunk)
                }
                if let end = state.end { return end.map { nil } }
                if state.paused {
                    state.paused = false
                    resume = state.resume
                    state.resume = nil
                }
                state.chunkWaiter = continuation
                return nil
            }
            resume?()
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The reader stopped early: the transport is told at its next chunk, and a paused one is
    /// woken so it hears it.
    package func readerLeft() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.readerGone = true
            state.chunks = []
            state.buffered = 0
            defer { state.resume = nil }
            return state.paused ? state.resume : nil
        }
        resume?()
    }
}
