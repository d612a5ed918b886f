import Courier
import CourierCurl
import Foundation

/// The transports one conformance suite runs against.
public enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlSession
    case curl

    public var description: String { rawValue }

    /// A new client of this kind with the given response-size cap.
    public func makeClient(maxResponseBytes: Int = 64 << 20) -> any HTTPClient {
        switch self {
        case .urlSession:
            URLSessionHTTPClient(
                configuration: .init(timeout: 120, maxResponseBytes: maxResponseBytes))
        case .curl:
            CurlHTTPClient(configuration: .init(timeout: 120, maxResponseBytes: maxResponseBytes))
        }
    }

    /// Whether repeated response fields arrive as separate fields. FoundationNetworking on Linux
    /// joins them with ", " (docs/transports.md).
    public var keepsRepeatedResponseFields: Bool {
        switch self {
        case .urlSession: false
        case .curl: true
        }
    }

    /// The `Accept-Encoding` this transport sends when the caller set none: the codings it
    /// decodes, `gzip, deflate, br, zstd` on both on Linux (docs/transports.md, "Compressed
    /// responses").
    public var acceptEncoding: String {
        switch self {
        case .urlSession: URLSessionHTTPClient.acceptEncoding
        case .curl: WireRequest.acceptEncoding
        }
    }
}
