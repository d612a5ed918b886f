import Foundation

/// Carries a response body from a transport to the code iterating it
/// (``ResponseBodyDestination/stream(_:)``, made by ``HTTPClient/stream(_:)``).
///
/// The transport offers chunks as they arrive; the reader takes them. When more than
/// `bufferLimit` bytes wait, the channel refuses the next chunk and a transport that can wait
/// (curl pauses the transfer) is told to go on once the reader has taken them, so a slow reader
/// holds the body back instead of letting it fill memory. A transport that cannot wait
/// (URLSession; curl decoding a compressed body) has its chunks taken until
/// ``backlogCeiling`` bytes wait, and then is told the reader is too far behind: memory stays
/// bounded, and the reader learns why at the end of what it was given.
public final class BodyChunkChannel: Sendable, Hashable {
    /// What the reader learns first: the final response's head.
    package struct Head: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
    }

    private struct State {
        var head: Result<Head, any Error>?
        var headWaiter: CheckedContinuation<Head, any Error>?
        /// The chunks taken from the transport, from ``firstChunk`` on not read yet.
        var chunks: [Data] = []
        /// How many of ``chunks`` the reader has taken. Taken from the front by an index, not
        /// `removeFirst()`: URLSession cannot be paused, a reader that fell behind had tens of
        /// thousands of chunks waiting, and draining them one `removeFirst()` at a time moved
        /// the whole array each time (minutes, for a 2 GiB backlog).
        var firstChunk = 0
        var hasChunks: Bool { firstChunk < chunks.count }

        /// The next chunk, taken.
        mutating func takeChunk() -> Data {
            let chunk = chunks[firstChunk]
            chunks[firstChunk] = Data()
            firstChunk += 1
            if firstChunk == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                firstChunk = 0
            } else if firstChunk >= 1024, firstChunk * 2 >= chunks.count {
                chunks.removeFirst(firstChunk)
                firstChunk = 0
            }
            return chunk
        }
        var buffered = 0
        var peakBuffered = 0
        var end: Result<Void, any Error>?
        var chunkWaiter: CheckedContinuation<Data?, any Error>?
        /// The transport was refused a chunk and waits for `resume`.
        var paused = false
        var resume: (@Sendable () -> Void)?
        var readerGone = false
        /// An attempt's channel: what it made of its head (a reader's channel keeps none).
        var verdict = Verdict.undecided
    }

    /// Where an attempt's channel sends what it keeps (``attempt(keeping:)``).
    private struct Forward: Sendable {
        let parent: BodyChunkChannel
        let keeps: @Sendable (_ status: Int, _ headers: HTTPHeaders) -> Bool
    }

    /// What an attempt's channel made of its head.
    private enum Verdict {
        case undecided, kept, discarded
    }

    /// Bytes that may wait for the reader before the transport is held back.
    package let bufferLimit: Int
    private let state = Locked(State())
    private let forward: Forward?

    package init(bufferLimit: Int = 1 << 20) {
        self.bufferLimit = bufferLimit
        self.forward = nil
    }

    private init(forward: Forward) {
        self.bufferLimit = forward.parent.bufferLimit
        self.forward = forward
    }

    /// A channel for one attempt of a middleware that may discard the response (a redirect
    /// it follows, a status it retries, a token the server rejected): when the head arrives,
    /// `keeps` decides. A kept response's head and body go on to this channel (and so to the
    /// reader); a discarded one's body is read and dropped, so the reader never sees a byte
    /// of an attempt that is not the answer. Each middleware layer wraps the channel it was
    /// given, so the head must be kept by every layer to reach the reader.
    package func attempt(
        keeping keeps: @escaping @Sendable (_ status: Int, _ headers: HTTPHeaders) -> Bool
    ) -> BodyChunkChannel {
        BodyChunkChannel(forward: Forward(parent: self, keeps: keeps))
    }

    /// Whether this attempt's head went on towards the reader: its response is the answer,
    /// and a middleware can no longer send the request again (the reader has its bytes).
    package var reachedReader: Bool {
        guard forward != nil else { return hasHead }
        return state.withLock { $0.verdict == .kept }
    }

    public static func == (lhs: BodyChunkChannel, rhs: BodyChunkChannel) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Transport side

    /// The most bytes that waited for the reader at once (for tests of the back-pressure).
    package var peakBufferedBytes: Int {
        if let forward { return forward.parent.peakBufferedBytes }
        return state.withLock { $0.peakBuffered }
    }

    /// Whether the body has ended, with or without an error (chunks may still wait).
    package var hasEnded: Bool {
        if let forward { return forward.parent.hasEnded }
        return state.withLock { $0.end != nil }
    }

    /// Whether the head has arrived (for an attempt's channel: whether it was decided).
    package var hasHead: Bool {
        if forward != nil { return state.withLock { $0.verdict != .undecided } }
        return state.withLock { $0.head != nil }
    }

    /// Hands the head over (once: a second head is ignored and returns false).
    @discardableResult
    package func deliver(status: Int, headers: HTTPHeaders) -> Bool {
        if let forward {
            let keep = forward.keeps(status, headers)
            let first = state.withLock { state -> Bool in
                guard state.verdict == .undecided else { return false }
                state.verdict = keep ? .kept : .discarded
                return true
            }
            if first, keep { forward.parent.deliver(status: status, headers: headers) }
            return first
        }
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
        /// Not taken, and the transport cannot wait: ``backlogCeiling`` bytes already wait for
        /// the reader. Stop the transfer with ``backlogError(url:)``.
        case readerTooFarBehind
    }

    /// How many bytes may wait for the reader when the transport cannot pause: 64 times
    /// ``bufferLimit`` (64 MiB by default). Past it, waiting is no longer back-pressure but a
    /// leak: FoundationNetworking took 2.5 GiB of a fast body in 2 s while its reader slept.
    package var backlogCeiling: Int {
        let (product, overflow) = bufferLimit.multipliedReportingOverflow(by: 64)
        return overflow ? Int.max : product
    }

    /// The error that ends a transfer whose reader fell ``backlogCeiling`` bytes behind.
    package func backlogError(url: URL?) -> HTTPError {
        HTTPError(
            .bodyTooLarge,
            "the reader fell \(backlogCeiling) bytes behind a body that cannot be paused "
                + "(URLSession's, or a compressed body's): read faster, or pass stream(_:bufferLimit:) "
                + "a larger bufferLimit (64 times it may wait)",
            url: url)
    }

    /// Offers a chunk. `canWait` says whether the transport can hold it back (curl can pause;
    /// URLSession cannot, so its chunks are taken up to ``backlogCeiling``). `alreadyHeld`
    /// says the bytes are in memory anyway (a whole body from a client that ignored the
    /// destination), so the ceiling does not apply.
    package func offer(
        _ bytes: UnsafeRawBufferPointer, canWait: Bool, resume: (@Sendable () -> Void)? = nil,
        alreadyHeld: Bool = false
    )
        -> Offer
    {
        if let forward {
            // A discarded attempt's body is read to its end and dropped.
            if state.withLock({ $0.verdict == .discarded }) { return .taken }
            return forward.parent.offer(
                bytes, canWait: canWait, resume: resume, alreadyHeld: alreadyHeld)
        }
        var handOver: (CheckedContinuation<Data?, any Error>, Data)?
        let offer = state.withLock { state -> Offer in
            if state.readerGone { return .readerGone }
            if canWait, state.buffered >= bufferLimit {
                state.paused = true
                state.resume = resume
                return .full
            }
            if !canWait, !alreadyHeld, state.buffered + bytes.count > backlogCeiling {
                return .readerTooFarBehind
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

    /// Ends the body: after the chunks already taken, the reader sees the end or `error`. Only
    /// the reader's own channel is finished (by ``HTTPClient/stream(_:bufferLimit:)``, once
    /// the whole stack has answered); an attempt's channel ignores it.
    package func finish(_ error: (any Error)? = nil) {
        guard forward == nil else { return }
        let (headWaiter, chunkWaiter) = state.withLock { state in
            if state.end == nil { state.end = error.map { .failure($0) } ?? .success(()) }
            if state.head == nil, let error { state.head = .failure(error) }
            defer {
                state.headWaiter = nil
                if !state.hasChunks { state.chunkWaiter = nil }
            }
            return (state.headWaiter, state.hasChunks ? nil : state.chunkWaiter)
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
                if state.hasChunks {
                    let chunk = state.takeChunk()
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
            state.firstChunk = 0
            state.buffered = 0
            defer { state.resume = nil }
            return state.paused ? state.resume : nil
        }
        resume?()
    }
}
