import Courier
import CourierCurl
import Foundation

/// The transports a job or a benchmark can run on.
public enum Backend: String, Sendable, CaseIterable, Codable {
    case curl
    case urlsession

    /// A new transport of this kind.
    public func makeClient(
        timeout: TimeInterval = 60, maxResponseBytes: Int = 64 << 20, maxConnectionsPerHost: Int = 0
    ) -> any HTTPClient {
        switch self {
        case .curl:
            CurlHTTPClient(
                configuration: .init(
                    timeout: timeout, maxResponseBytes: maxResponseBytes,
                    maxConnectionsPerHost: maxConnectionsPerHost))
        case .urlsession:
            URLSessionHTTPClient(
                configuration: .init(
                    timeout: timeout, maxResponseBytes: maxResponseBytes,
                    maxConnectionsPerHost: maxConnectionsPerHost > 0 ? maxConnectionsPerHost : 64))
        }
    }
}
