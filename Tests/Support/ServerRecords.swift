import Foundation

/// What the fixture server recorded under a key (`/hits?key=K`).
public struct ServerHits: Decodable, Sendable {
    /// One request as the server saw it.
    public struct Entry: Decodable, Sendable {
        public let time: Double
        public let method: String
        public let path: String
        public let headers: [[String]]
        /// The request body as UTF-8 (invalid bytes replaced).
        public let body: String
        /// The client's TCP port: one port per connection the server saw.
        public let peerPort: Int

        /// The first value of a request header, compared case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0[0].lowercased() == name.lowercased() }?[1]
        }
    }

    public let count: Int
    public let requests: [Entry]

    /// Reads the record of `key`.
    public static func of(_ key: String, on server: FixtureServer) async throws -> ServerHits {
        try await ProbeClient().decode(ServerHits.self, from: server.url("/hits?key=\(key)"))
    }
}

extension FixtureServer {
    /// The most `/slow` requests of `key` the server had in flight at once.
    public func maxConcurrency(of key: String) async throws -> Int {
        struct Concurrency: Decodable { let max: Int }
        return try await ProbeClient().decode(
            Concurrency.self, from: url("/concurrency?key=\(key)")
        ).max
    }
}
