import CCurl
import Courier
import Foundation

/// An ``HTTPClient`` on libcurl's multi interface: one event-loop thread drives every transfer,
/// easy handles are reused and connections kept alive.
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

        public init(
            timeout: TimeInterval = 60,
            connectTimeout: TimeInterval = 10,
            maxResponseBytes: Int = 64 << 20,
            maxConnections: Int = 0,
            maxConnectionsPerHost: Int = 64,
            http2: Bool = false,
            maxIdleHandles: Int = 256,
            maxIdleBodyBufferBytes: Int = 32 << 20
        ) {
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.maxResponseBytes = maxResponseBytes
            self.maxConnections = maxConnections
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.http2 = http2
            self.maxIdleHandles = maxIdleHandles
            self.maxIdleBodyBufferBytes = maxIdleBodyBufferBytes
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

        public init(activeTransfers: Int = 0, liveHandles: Int = 0, completedTransfers: Int = 0) {
            self.activeTransfers = activeTransfers
            self.liveHandles = liveHandles
            self.completedTransfers = completedTransfers
        }
    }

    public let configuration: Configuration
    private let loop: CurlEventLoop
    private let bodyBuffers: BodyBufferPool

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        loop = CurlEventLoop(settings: configuration)
        bodyBuffers = BodyBufferPool(limit: configuration.maxIdleBodyBufferBytes)
    }

    deinit {
        loop.shutdown()
    }

    /// Whether the linked libcurl supports HTTP/2.
    public static var supportsHTTP2: Bool { CurlGlobal.supportsHTTP2 }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let wire = try WireRequest(request)
        // The upload is measured before the destination is touched: a missing file to send
        // must not truncate the file the answer would have gone to.
        let upload = try request.streamedBody.map {
            body throws(HTTPError) in try StreamedBodyReader(body, url: request.displayURL)
        }
        let transfer = CurlTransfer(
            request: request, wire: wire, maxBodyBytes: configuration.maxResponseBytes,
            sink: try BodyFileWriter.opening(for: request), upload: upload, pool: bodyBuffers)
        let loop = self.loop
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

    /// Stops the event loop, ends waiting requests with `.cancelled` and frees every handle.
    public func shutdown() {
        loop.shutdown()
    }

    /// Current handle and transfer counts.
    public var statistics: Statistics { loop.statistics }
}
