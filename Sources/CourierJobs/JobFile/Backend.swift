import Courier
import CourierCurl
import Foundation

/// The transports a job or a benchmark can run on.
enum Backend: String, Sendable, CaseIterable, Codable {
    case curl
    case urlsession

    /// A new transport of this kind; `maxConnectionsPerHost` 0 keeps the transport's default
    /// (64 on both). `http2` offers HTTP/2 over TLS on curl (URLSession negotiates by itself);
    /// `eventLoops` sets curl's loop threads (`nil`: one per core, at most four, as Courier
    /// runs its tasks and senders on them).
    func makeClient(
        timeout: TimeInterval = 60, maxResponseBytes: Int = 64 << 20,
        maxConnectionsPerHost: Int = 0,
        http2: Bool = false, eventLoops: Int? = nil
    ) -> any HTTPClient {
        let perHost = maxConnectionsPerHost > 0 ? maxConnectionsPerHost : 64
        return switch self {
        case .curl:
            CurlHTTPClient(
                configuration: .init(
                    timeout: timeout, maxResponseBytes: maxResponseBytes,
                    maxConnectionsPerHost: perHost, http2: http2,
                    // As many idle handles as tasks in flight: with fewer, a run of 512 made a
                    // new handle for 6,226 of 20,000 transfers.
                    maxIdleHandles: max(256, perHost),
                    eventLoops: eventLoops
                        ?? CurlHTTPClient.Configuration.eventLoopsForTaskExecutors))
        case .urlsession:
            URLSessionHTTPClient(
                configuration: .init(
                    timeout: timeout, maxResponseBytes: maxResponseBytes,
                    maxConnectionsPerHost: perHost))
        }
    }
}
