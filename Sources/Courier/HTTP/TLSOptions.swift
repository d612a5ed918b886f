import Foundation

/// How a request's TLS connection is set up beyond the defaults: whom to trust, who we are, which
/// server key to accept and how old a protocol to allow.
///
/// ```swift
/// var request = HTTPRequest(url: URL(string: "https://internal.example:8443/v1/jobs")!)
/// request.tls.caBundle = URL(fileURLWithPath: "/etc/courier/internal-ca.pem")
/// request.tls.clientCertificate = URL(fileURLWithPath: "/etc/courier/client.pem")
/// request.tls.clientKey = URL(fileURLWithPath: "/etc/courier/client-key.pem")
/// request.tls.pinnedPublicKeys = ["sha256//YhKJKSzoTt2b5FP18fvpHo7fJYqQCjAa3HWY3tvRMwE="]
/// ```
/// ``CurlHTTPClient`` supports every option. ``URLSessionHTTPClient`` supports none of them on
/// Linux, and fails a request that sets any with ``HTTPError/Kind-swift.struct/unsupported``
/// before sending it, rather than ignoring it.
public struct TLSOptions: Sendable, Hashable {
    /// TLS protocol versions, for ``minimumVersion``.
    public enum Version: String, Sendable, Hashable, CaseIterable {
        case tls1_2 = "1.2"
        case tls1_3 = "1.3"
    }

    /// A PEM file of the certificate authorities to trust, instead of the system's.
    public var caBundle: URL?
    /// A PEM client certificate to present when the server asks for one (mutual TLS).
    public var clientCertificate: URL?
    /// The PEM private key of ``clientCertificate`` (`nil`: the key is in the certificate file).
    public var clientKey: URL?
    /// The passphrase of an encrypted ``clientKey``. Never logged or shown.
    public var clientKeyPassphrase: String?
    /// Public-key pins in curl's form, `sha256//` and the base64 SHA-256 of the server key's
    /// DER `SubjectPublicKeyInfo`; the connection fails with `.tls` unless the server's key
    /// matches one of them. Empty: no pinning.
    public var pinnedPublicKeys: [String]
    /// The oldest TLS version to accept (`nil`: the TLS library's default).
    public var minimumVersion: Version?

    public init(
        caBundle: URL? = nil,
        clientCertificate: URL? = nil,
        clientKey: URL? = nil,
        clientKeyPassphrase: String? = nil,
        pinnedPublicKeys: [String] = [],
        minimumVersion: Version? = nil
    ) {
        self.caBundle = caBundle
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.clientKeyPassphrase = clientKeyPassphrase
        self.pinnedPublicKeys = pinnedPublicKeys
        self.minimumVersion = minimumVersion
    }

    /// Whether every option is at its default.
    public var isDefault: Bool { self == TLSOptions() }

    /// The names of the options that are set, for messages.
    package var setOptionNames: [String] {
        var names: [String] = []
        if caBundle != nil { names.append("caBundle") }
        if clientCertificate != nil { names.append("clientCertificate") }
        if clientKey != nil { names.append("clientKey") }
        if clientKeyPassphrase != nil { names.append("clientKeyPassphrase") }
        if !pinnedPublicKeys.isEmpty { names.append("pinnedPublicKeys") }
        if minimumVersion != nil { names.append("minimumVersion") }
        return names
    }
}
