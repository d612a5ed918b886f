/// An HTTP request method.
///
/// An open set: the common methods are static members, and any other token works too.
/// ```swift
/// let purge = HTTPMethod("PURGE")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method token as sent on the wire, for example `GET`.
    public let rawValue: String

    /// Creates a method from its token; tokens are case-sensitive, so `get` is not `GET`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from its token.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"
    public static let connect: HTTPMethod = "CONNECT"

    /// Whether RFC 9110 calls the method idempotent, so that repeating it is safe.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace: true
        default: false
        }
    }

    /// Whether the token is a valid RFC 9110 `token` (letters, digits and `!#$%&'*+-.^_`|~`).
    public var isValidToken: Bool {
        // Bytes, not Unicode properties: every request's method and header names go through
        // this, and a token is ASCII by definition.
        !rawValue.isEmpty && rawValue.utf8.allSatisfy(Self.isTokenByte)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    public var description: String { rawValue }
}
