import Foundation

/// The scheme, host and port of an http(s) URL (RFC 6454): credentials are only ever sent to
/// the origin they were configured for.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public let scheme: String
    /// The host, lowercased.
    public let host: String
    /// The port, with the scheme's default filled in.
    public let port: Int

    /// The origin of an absolute http or https URL with a host; `nil` for any other URL.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether `url` is an absolute http or https URL with a host.
    public static func isHTTP(_ url: URL) -> Bool { Origin(url) != nil }

    public var description: String { "\(scheme)://\(host):\(port)" }
}
