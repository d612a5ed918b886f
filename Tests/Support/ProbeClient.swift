import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Plain reads of a test server's bookkeeping routes, independent of the transports under test.
public struct ProbeClient: Sendable {
    public init() {}

    /// Whether the URL answers at all.
    public func get(_ url: URL) async -> Bool {
        (try? await fetch(url)) != nil
    }

    /// The body of a GET, decoded from JSON.
    public func decode<Value: Decodable>(_ type: Value.Type, from url: URL) async throws -> Value {
        try JSONDecoder().decode(type, from: try await fetch(url))
    }

    /// POSTs `body` (JSON) and returns the response's body: how a test changes a fixture
    /// server's data between runs.
    @discardableResult
    public func post(_ url: URL, json body: Data) async throws -> Data {
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await Self.session.data(for: request)
        return data
    }

    private func fetch(_ url: URL) async throws -> Data {
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.httpMethod = "GET"
        let (data, _) = try await Self.session.data(for: request)
        return data
    }

    /// No cache: polling the same bookkeeping URL must see fresh answers (URLSession.shared
    /// would serve the first one again).
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        return URLSession(configuration: configuration)
    }()
}
