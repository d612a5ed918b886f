import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// Whether the host is this machine's loopback: `localhost`, an IPv4 literal in
    /// 127.0.0.0/8 (four decimal octets, as `inet_pton` reads them) or the IPv6 literal `::1`.
    /// A name that merely starts with `127.` (`127.attacker.example`) is not: it resolves
    /// wherever its owner likes, and a secret sent to it in plain text is gone.
    package var isLoopback: Bool { Self.isLoopback(host: host) }

    /// ``isLoopback`` for a host as a URL gives it (IPv6 with or without brackets).
    package static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            // s_addr is in network byte order: its first byte in memory is the first octet.
            return withUnsafeBytes(of: &v4) { $0[0] } == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in
                bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            }
        }
        return false
    }

    /// `text` as an absolute http or https URL with a host, or `nil`: the one check behind
    /// every "absolute http(s) URL" a job file, a command line or a ping takes.
    package static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), Origin(url) != nil, hasValidPort(url) else {
            return nil
        }
        return url
    }

    /// Whether `url`'s port, when it names one, is one a connection can go to (1 to 65535):
    /// Foundation parses `:99999` as a port, which libcurl then refuses on every request.
    package static func hasValidPort(_ url: URL) -> Bool {
        url.port.map { (1...65_535).contains($0) } ?? true
    }
}
