import Foundation

/// The loopback servers the integration tests share, each started once per test process on
/// free ports and stopped when the process ends.
public enum TestServers {
    private static let fixtureProcess = Result { try ServerProcess(script: "fixture_server.py") }
    private static let floodProcess = Result { try ServerProcess(script: "fixture_server.py") }
    private static let httpbinProcess = Result { try ServerProcess(script: "httpbin_server.py") }
    private static let nginxProcess = Result { try ServerProcess(script: "nginx_h2_server.py") }
    private static let datasetteProcess = Result {
        try ServerProcess(script: "datasette_server.py")
    }
    private static let kintoProcess = Result { try ServerProcess(script: "kinto_server.py") }
    private static let pushgatewayProcess = Result {
        try ServerProcess(script: "pushgateway_server.py")
    }
    private static let localstripeProcess = Result {
        try ServerProcess(script: "localstripe_server.py")
    }

    /// localstripe (PyPI), a fake but stateful Stripe API: its base URL (`…/v1` is its API).
    /// Any `sk_test_…` key, as the Basic auth user, is accepted.
    public static func localstripe() throws -> URL {
        URL(string: "http://127.0.0.1:\(try localstripeProcess.get().ports[0])")!
    }

    /// The Prometheus Pushgateway (Debian's): its base URL. Its groups outlive a test: each
    /// test pushes under a job name of its own.
    public static func pushgateway() throws -> URL {
        URL(string: "http://127.0.0.1:\(try pushgatewayProcess.get().ports[0])")!
    }

    /// Kinto (PyPI) with its memory backends: its base URL (`…/v1` is its API). Anyone may make
    /// an account, and any account buckets; each test makes its own.
    public static func kinto() throws -> URL {
        URL(string: "http://127.0.0.1:\(try kintoProcess.get().ports[0])")!
    }

    /// Datasette (PyPI) over a SQLite database of its own: its base URL, and the database's
    /// path, which `Tests/Fixtures/datasette_store.py` changes between runs.
    public static func datasette() throws -> (base: URL, database: String) {
        let process = try datasetteProcess.get()
        return (URL(string: "http://127.0.0.1:\(process.ports[0])")!, process.fields[1])
    }
    private static let tlsFolder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-pki-\(UUID().uuidString)")
    private static let tlsProcess = Result {
        try FileManager.default.createDirectory(at: tlsFolder, withIntermediateDirectories: true)
        return try ServerProcess(script: "tls_server.py", arguments: [tlsFolder.path])
    }

    /// TLS listeners with a throwaway PKI (`Tests/Fixtures/tls_server.py`).
    public static func tls() throws -> TLSFixture {
        let ports = try tlsProcess.get().ports
        return TLSFixture(folder: tlsFolder, ports: (ports[0], ports[1], ports[2]))
    }

    /// nginx with TLS (a self-signed certificate for localhost) and HTTP/2; every path answers
    /// "<protocol> <connection number>".
    public static func nginxHTTP2() throws -> URL {
        URL(string: "https://localhost:\(try nginxProcess.get().ports[0])")!
    }

    /// The self-signed certificate the HTTP/2 nginx serves, to trust as a CA bundle.
    public static func nginxHTTP2Certificate() throws -> URL {
        URL(fileURLWithPath: try nginxProcess.get().fields[1])
    }

    /// Courier's own fixture server (`Tests/Fixtures/fixture_server.py`).
    public static func fixture() throws -> FixtureServer {
        let process = try fixtureProcess.get()
        return FixtureServer(
            port: process.ports[0], otherPort: process.ports[1], tlsPort: process.ports[2])
    }

    /// A fixture server of its own for the routes that send as fast as they can
    /// (`/endless-fast`): in the shared one such a handler starved the others (one Python
    /// process, one GIL) until unrelated tests timed out.
    public static func floodFixture() throws -> FixtureServer {
        let process = try floodProcess.get()
        return FixtureServer(
            port: process.ports[0], otherPort: process.ports[1], tlsPort: process.ports[2])
    }

    /// httpbin served by gunicorn; waits until it answers, since gunicorn boots its workers
    /// after the port is bound.
    public static func httpbin() async throws -> URL {
        let process = try httpbinProcess.get()
        let base = URL(string: "http://127.0.0.1:\(process.ports[0])")!
        for _ in 0..<100 {
            if await isAnswering(base.appendingPathComponent("get")) { return base }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ServerStartError(script: "httpbin_server.py", output: "no answer within 10 s")
    }

    private static func isAnswering(_ url: URL) async -> Bool {
        let probe = ProbeClient()
        return await probe.get(url)
    }
}

/// The addresses of the fixture server.
public struct FixtureServer: Sendable {
    /// Its first port, on 127.0.0.1.
    public let port: Int
    /// Its second port, reached as `localhost`: another host and port than ``port``.
    public let otherPort: Int
    /// Its TLS port, with a self-signed certificate for `localhost` (0 without openssl).
    public let tlsPort: Int

    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A URL on the first port; `pathAndQuery` starts with `/`.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// A URL on the second port under the host name `localhost`.
    public func otherHostURL(_ pathAndQuery: String) -> URL {
        URL(string: "http://localhost:\(otherPort)\(pathAndQuery)")!
    }

    /// An https URL on the TLS port, whose certificate no client trusts.
    public func tlsURL(_ pathAndQuery: String) -> URL {
        URL(string: "https://localhost:\(tlsPort)\(pathAndQuery)")!
    }

    /// A fresh key, so each test's counters on the server are its own.
    public static func uniqueKey(_ label: String = "t") -> String {
        "\(label)-\(UUID().uuidString.prefix(8))"
    }
}

/// The TLS fixture: its PKI files and its three listeners.
public struct TLSFixture: Sendable {
    /// Where `ca.pem`, `other-ca.pem`, `client.pem`, `client-key.pem` and the rest are.
    public let folder: URL
    let ports: (plain: Int, mutual: Int, tls12: Int)

    /// A file of the PKI.
    public func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// A URL on the listener that asks for no client certificate.
    public func plainURL(_ path: String = "/") -> URL {
        URL(string: "https://127.0.0.1:\(ports.plain)\(path)")!
    }

    /// A URL on the listener that requires a client certificate signed by `ca.pem`.
    public func mutualURL(_ path: String = "/") -> URL {
        URL(string: "https://127.0.0.1:\(ports.mutual)\(path)")!
    }

    /// A URL on the listener that speaks at most TLS 1.2.
    public func tls12URL(_ path: String = "/") -> URL {
        URL(string: "https://127.0.0.1:\(ports.tls12)\(path)")!
    }

    /// curl's pin of the server's public key.
    public func pin() throws -> String {
        try String(contentsOf: file("pin.txt"), encoding: .utf8)
    }
}
