/// The response of an endpoint that returns no body, such as `204 No Content`.
///
/// A non-empty body is accepted and ignored.
public struct EmptyResponse: Decodable, Sendable, Hashable, EmptyDecodable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public static var empty: EmptyResponse { EmptyResponse() }
}

/// A type with a value to stand for an empty body.
public protocol EmptyDecodable {
    static var empty: Self { get }
}

extension Optional: EmptyDecodable {
    public static var empty: Wrapped? { nil }
}
