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
        if Self.isPlainLoopback(url) {
            let (status, data) = try await LoopbackHTTP.exchangeOffPool(
                "POST", url, body: body, headers: [("Content-Type", "application/json")])
            guard (200..<300).contains(status) else {
                throw LoopbackHTTP.Failure(description: "POST \(url) answered \(status)")
            }
            return data
        }
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await Self.session.data(for: request)
        return data
    }

    /// Plain http on 127.0.0.1 or localhost: sent over a socket of its own
    /// (``LoopbackHTTP``), away from FoundationNetworking's one work queue, which a test's
    /// flood can hold for a minute.
    public static func isPlainLoopback(_ url: URL) -> Bool {
        url.scheme == "http" && ["127.0.0.1", "localhost"].contains(url.host ?? "")
            && url.port != nil
    }

    private func fetch(_ url: URL) async throws -> Data {
        if Self.isPlainLoopback(url) {
            return try await LoopbackHTTP.exchangeOffPool("GET", url).body
        }
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
