import Courier
import Foundation

/// What the fixture server's `/echo` route returns.
public struct Echo: Decodable, Sendable {
    public let method: String
    public let path: String
    public let query: String
    public let headers: [[String]]
    public let body: String
    public let bodyLength: Int
    /// The client's TCP port: equal across requests when a connection was reused.
    public let peerPort: Int

    /// Every value the server received for the header, compared case-insensitively.
    public func values(for name: String) -> [String] {
        headers.filter { $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    /// Decodes an `/echo` response.
    public init(_ response: HTTPResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: response.body)
    }
}
