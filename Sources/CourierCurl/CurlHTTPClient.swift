import CCurl
import Courier
import Foundation

/// An ``HTTPClient`` on libcurl's multi interface: event-loop threads drive the transfers,
/// easy handles are reused and connections kept alive.
///
/// Each loop is one thread with its own multi handle. A request goes to the loop with the fewest
/// transfers in flight (the first on a tie), so requests made one after another share one loop
/// and its kept-alive connection, and many at once are spread over the loops, which share the
/// connection limits between them.
///
/// ```swift
/// let curl = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 16))
/// let client = DefaultAPIClient(httpClient: curl, configuration: configuration)
/// ```
/// Each `perform` suspends the calling task without blocking a thread; cancelling the task
/// removes the transfer at once. Call ``shutdown()`` (or drop the last reference) to stop the
/// loop and free every handle; requests after that fail with `.cancelled`.
public final class CurlHTTPClient: HTTPClient {
    /// Settings for the whole client.
    public struct Configuration: Sendable {
        /// Deadline for requests that set no `timeout` of their own, in seconds.
        public var timeout: TimeInterval
        /// Deadline for establishing a connection, in seconds.
        public var connectTimeout: TimeInterval
        /// The largest response body accepted in memory; a larger one fails with `.bodyTooLarge`.
        /// Bodies sent to a file (``HTTPRequest/bodyDestination``) have no cap.
        public var maxResponseBytes: Int
        /// The most connections open at once (0: no limit).
        public var maxConnections: Int
        /// The most connections to one host (0: no limit). Transfers beyond it wait for a free
        /// connection instead of opening and closing connections of their own.
        public var maxConnectionsPerHost: Int
        /// Offer HTTP/2 over TLS and multiplex requests on one connection.
        public var http2: Bool
        /// Easy handles kept for reuse when idle.
        public var maxIdleHandles: Int
        /// Bytes of large response-body buffers kept for reuse once callers release them.
        public var maxIdleBodyBufferBytes: Int
        /// Event-loop threads. One loop does all of libcurl's work for its transfers, and under
        /// load it is the busiest thread; more loops use more cores. Limited to what the
        /// connection limits can share (a per-host limit of 1 is one loop), and one with HTTP/2,
        /// so that requests multiplex on one connection.
        public var eventLoops: Int

        /// The default ``eventLoops``: one per two cores, at most 4. A loop under load takes
        /// a core, and the callers' tasks need the others; on two cores a second loop cost a
        /// fifth more CPU per request for no more requests a second (docs/transports.md).
        public static var defaultEventLoops: Int {
            min(4, max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        }

        /// ``eventLoops`` for callers whose tasks run on the loops (``taskExecutors``): one
        /// per core, at most 4, since the cores those tasks would take are then the loops'.
        public static var eventLoopsForTaskExecutors: Int {
            min(4, ProcessInfo.processInfo.activeProcessorCount)
        }

        public init(
            timeout: TimeInterval = 60,
            connectTimeout: TimeInterval = 10,
            maxResponseBytes: Int = 64 << 20,
            maxConnections: Int = 0,
            maxConnectionsPerHost: Int = 64,
            http2: Bool = false,
            maxIdleHandles: Int = 256,
            maxIdleBodyBufferBytes: Int = 32 << 20,
            eventLoops: Int = Configuration.defaultEventLoops
        ) {
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.maxResponseBytes = maxResponseBytes
            self.maxConnections = maxConnections
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.http2 = http2
            self.maxIdleHandles = maxIdleHandles
            self.maxIdleBodyBufferBytes = maxIdleBodyBufferBytes
            self.eventLoops = eventLoops
        }

        /// How many loops run: ``eventLoops``, but never more than the connection limits can
        /// give each at least one connection, and one for HTTP/2.
        var loopCount: Int {
            var count = max(1, eventLoops)
            if http2 { count = 1 }
            if maxConnectionsPerHost > 0 { count = min(count, maxConnectionsPerHost) }
            if maxConnections > 0 { count = min(count, maxConnections) }
            return count
        }

        /// The settings of loop `index` of `count`: the connection limits shared out, so that
        /// together the loops keep to them.
        func share(_ index: Int, of count: Int) -> Configuration {
            func part(_ limit: Int) -> Int {
                limit == 0 ? 0 : limit / count + (index < limit % count ? 1 : 0)
            }
            var settings = self
            settings.maxConnections = part(maxConnections)
            settings.maxConnectionsPerHost = part(maxConnectionsPerHost)
            settings.maxIdleHandles = max(1, maxIdleHandles / count)
            return settings
        }
    }

    /// Counts that show whether handles are leaking.
    public struct Statistics: Sendable, Hashable {
        /// Transfers added to the multi handle and not yet finished.
        public var activeTransfers = 0
        /// Easy handles allocated and not yet freed (in use or idle).
        public var liveHandles = 0
        /// Transfers that ran to an end (success or transport error).
        public var completedTransfers = 0
        /// Event loops running.
        public var eventLoops = 0
        /// Event loops with at least one transfer in flight.
        public var busyEventLoops = 0

        public init(
            activeTransfers: Int = 0, liveHandles: Int = 0, completedTransfers: Int = 0,
            eventLoops: Int = 0, busyEventLoops: Int = 0
        ) {
            self.activeTransfers = activeTransfers
            self.liveHandles = liveHandles
            self.completedTransfers = completedTransfers
            self.eventLoops = eventLoops
            self.busyEventLoops = busyEventLoops
        }
    }

    public let configuration: Configuration
    let loops: [CurlEventLoop]
    /// Transfers in flight per loop, from submission until the caller is resumed.
    private let load: Locked<[Int]>
    private let bodyBuffers: BodyBufferPool

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let count = configuration.loopCount
        loops = (0..<count).map { CurlEventLoop(settings: configuration.share($0, of: count)) }
        load = Locked(Array(repeating: 0, count: count))
        bodyBuffers = BodyBufferPool(limit: configuration.maxIdleBodyBufferBytes)
    }

    deinit {
        for loop in loops { loop.shutdown() }
    }

    /// The loop for a request: the caller's own when it runs on one (its task chose it; not
    /// counted, so that no lock is taken), else the one with the fewest counted transfers in
    /// flight (the first on a tie), counted until ``release(_:)``.
    private func takeLoop() -> (index: Int, counted: Bool) {
        // One loop (the default on two cores): no choice, so no lock on every request.
        guard loops.count > 1 else { return (0, false) }
        if let current = currentLoop { return (current, false) }
        let best = load.withLock { load in
            var best = 0
            for index in load.indices.dropFirst() where load[index] < load[best] { best = index }
            load[best] += 1
            return best
        }
        return (best, true)
    }

    /// The loop whose thread is running the caller, if any.
    var currentLoop: Int? {
        // One thread-local read, compared with each loop (at most four): asked per request.
        guard let current = ccurl_current_loop() else { return nil }
        return loops.firstIndex { $0.identity == current }
    }

    private func release(_ index: Int) {
        load.withLock { $0[index] -= 1 }
    }

    /// The event loops as task executors. A task that prefers one runs on that loop's
    /// thread, and its requests go to that loop: they start and resume without crossing
    /// threads. For work that never blocks between requests (the job runner's tasks); a task
    /// that blocks its loop's thread stalls that loop's transfers.
    public var taskExecutors: [any TaskExecutor] { loops }

    /// Whether the linked libcurl supports HTTP/2.
    public static var supportsHTTP2: Bool { CurlGlobal.supportsHTTP2 }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = try makeTransfer(for: request)
        let (index, counted) = takeLoop()
        defer { if counted { release(index) } }
        let loop = loops[index]
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                if !loop.submit(transfer) {
                    transfer.finish(
                        .failure(
                            HTTPError(
                                .cancelled, "the client has shut down", url: transfer.displayURL)))
                }
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }

    /// The transfer for `request`, made outside `perform` so that its temporaries stay off
    /// the task's heap frame.
    @inline(never)
    private func makeTransfer(for request: HTTPRequest) throws(HTTPError) -> CurlTransfer {
        let wire = try WireRequest(request)
        // The upload is measured before the destination is touched: a missing file to send
        // must not truncate the file the answer would have gone to.
        let upload = try request.streamedBody.map {
            body throws(HTTPError) in try StreamedBodyReader(body, url: request.displayURL)
        }
        return CurlTransfer(
            request: request, wire: wire, maxBodyBytes: configuration.maxResponseBytes,
            sink: try BodyFileWriter.opening(for: request), upload: upload, pool: bodyBuffers)
    }

    /// Stops the event loop, ends waiting requests with `.cancelled` and frees every handle.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }

    /// Current handle and transfer counts, over every loop.
    public var statistics: Statistics {
        loops.reduce(into: Statistics(eventLoops: loops.count)) { total, loop in
            let counts = loop.statistics
            total.activeTransfers += counts.activeTransfers
            total.liveHandles += counts.liveHandles
            total.completedTransfers += counts.completedTransfers
            if counts.activeTransfers > 0 { total.busyEventLoops += 1 }
        }
    }
}
