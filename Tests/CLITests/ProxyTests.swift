import CourierTestSupport
import Foundation
import Testing

/// Both backends honour the proxy environment variables alike (`docs/transports.md`). The
/// fixture server plays the proxy on its second port: a request that went through a proxy
/// arrives in absolute form (`GET http://host:port/path`).
@Suite("proxy environment")
struct ProxyTests {
    @Test("http_proxy is used, and no_proxy bypasses it", arguments: RunCommandTests.backends)
    func proxyEnvironment(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("proxy")
        try space.writeJob(
            tasks: #"{"id": "p", "path": "/echo", "query": {"key": "\#(key)"}}"#)
        let proxy = "http://127.0.0.1:\(space.server.otherPort)"
        let proxied = try await space.run(backend: backend, environment: ["http_proxy": proxy])
        #expect(proxied.status == 0, "\(proxied.stderr)")
        let bypassed = try await space.run(
            backend: backend, environment: ["http_proxy": proxy, "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        let paths = try await ServerHits.of(key, on: space.server).requests.map(\.path)
        #expect(
            paths == [
                "http://127.0.0.1:\(space.server.port)/echo?key=\(key)", "/echo?key=\(key)",
            ])
    }
}
