import Foundation

/// What every request to one API shares.
/// ```swift
/// let configuration = APIConfiguration(
///     baseURL: URL(string: "https://api.github.com")!,
///     auth: .bearer(token),
///     headers: ["Accept": "application/vnd.github+json"])
/// ```
public struct APIConfiguration: Sendable {
    /// Paths of requests are joined to this URL.
    public var baseURL: URL
    public var auth: Authentication?
    /// Seconds before a request fails with `.timeout`, unless the request sets its own.
    public var timeout: TimeInterval
    /// Headers sent with every request; a request's own headers of the same name win.
    public var headers: HTTPHeaders
    /// Whether TLS certificates are checked. Leave it on outside tests.
    public var validatesTLS: Bool
    /// TLS options for every request: a CA bundle, a client certificate (mTLS), public-key
    /// pins, a minimum version (``TLSOptions``; the curl transport supports them all).
    public var tls = TLSOptions()
    /// Whether redirects are followed (through ``RedirectingHTTPClient``) and how many.
    public var maxRedirects: Int?
    /// The response content types every request accepts, unless it names its own
    /// (``APIRequest/acceptableContentTypes``); `nil`, the default, accepts any.
    /// ```swift
    /// configuration.acceptableContentTypes = ["application/json", "application/*+json"]
    /// ```
    public var acceptableContentTypes: [String]?
    /// Encodes `.json(value)` bodies. The default writes keys sorted (``stableEncoder()``): a
    /// plain `JSONEncoder` on Linux wrote one value's keys in one order, then in another,
    /// within one process (trial CC), so the same call sent different bytes.
    public var encoder: JSONEncoder
    /// Encodes ``APIRequest/queryParameters`` and `.form(value)` bodies.
    public var formEncoder = FormEncoder()
    public var decoder: JSONDecoder
    /// Changes each request before it is sent (signing, request ids); see ``HookingHTTPClient``.
    public var willSend: HookingHTTPClient<AnyHTTPClient>.WillSend?
    /// Sees each request and its response or error (metrics, logging).
    public var didReceive: HookingHTTPClient<AnyHTTPClient>.DidReceive?
    /// Turns a response whose status the request does not accept into the error to throw (a
    /// decoded problem document, say); `nil` keeps ``APIError`` with `.unacceptableStatus`.
    public var mapError: (@Sendable (HTTPResponse) -> (any Error)?)?

    public init(
        baseURL: URL,
        auth: Authentication? = nil,
        timeout: TimeInterval = 60,
        headers: HTTPHeaders = [:],
        validatesTLS: Bool = true,
        maxRedirects: Int? = 10,
        encoder: JSONEncoder = APIConfiguration.stableEncoder(),
        decoder: JSONDecoder = JSONDecoder()
    ) {
        self.baseURL = baseURL
        self.auth = auth
        self.timeout = timeout
        self.headers = headers
        self.validatesTLS = validatesTLS
        self.maxRedirects = maxRedirects
        self.encoder = encoder
        self.decoder = decoder
    }

    /// A `JSONEncoder` that writes an object's keys sorted: the same value, the same bytes
    /// (a body signed in `willSend`, an idempotent retry, a recording compared).
    public static func stableEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A configuration in the layered-client articles' terms: `apiKey` is sent as
    /// `Authorization: Bearer <apiKey>`, `validateSSL` checks certificates, and
    /// `additionalHeaders` go with every request.
    public init(
        baseURL: URL,
        apiKey: String,
        timeoutInterval: TimeInterval = 30,
        validateSSL: Bool = true,
        additionalHeaders: [String: String] = [:]
    ) {
        self.init(
            baseURL: baseURL, auth: .bearer(apiKey), timeout: timeoutInterval,
            headers: HTTPHeaders(additionalHeaders.sorted { $0.key < $1.key }),
            validatesTLS: validateSSL)
    }

    /// The same as ``timeout``, under the name the layered-client articles use.
    public var timeoutInterval: TimeInterval {
        get { timeout }
        set { timeout = newValue }
    }

    /// The bearer token of ``auth`` (`""` for any other authentication), under the name the
    /// layered-client articles use; setting it makes ``auth`` `.bearer` (trial KKK: code that
    /// read it as the articles do did not compile).
    public var apiKey: String {
        get {
            if case .bearer(let token)? = auth { return token }
            return ""
        }
        set { auth = .bearer(newValue) }
    }

    /// The same as ``validatesTLS``, under the name the layered-client articles use.
    public var validateSSL: Bool {
        get { validatesTLS }
        set { validatesTLS = newValue }
    }

    /// ``headers`` as a dictionary, under the name the layered-client articles use: a name
    /// given twice keeps its last value; setting it replaces every header.
    public var additionalHeaders: [String: String] {
        get { Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 }) }
        set { headers = HTTPHeaders(newValue.sorted { $0.key < $1.key }) }
    }
}
