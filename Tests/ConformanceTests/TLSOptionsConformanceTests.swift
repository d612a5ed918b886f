import Courier
import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// `TLSOptions` against real TLS listeners with their own CA: curl applies each option, and
/// URLSession on Linux refuses every one of them with `.unsupported` before sending.
@Suite("TLS options")
struct TLSOptionsConformanceTests {
    struct Reply: Decodable {
        let clientCN: String?
        let version: String
    }

    static func get(_ url: URL, _ tls: TLSOptions) async throws -> (HTTPResponse, Reply) {
        var request = HTTPRequest(url: url)
        request.tls = tls
        let response = try await CurlHTTPClient().perform(request)
        return (response, try JSONDecoder().decode(Reply.self, from: response.body))
    }

    static func failure(_ url: URL, _ tls: TLSOptions) async -> HTTPError? {
        var request = HTTPRequest(url: url)
        request.tls = tls
        do {
            _ = try await CurlHTTPClient().perform(request)
            return nil
        } catch {
            return error as? HTTPError
        }
    }

    @Test("the right CA bundle is accepted; the system's and an unknown one are refused")
    func caBundle() async throws {
        let fixture = try TestServers.tls()
        let (response, _) = try await Self.get(
            fixture.plainURL(), TLSOptions(caBundle: fixture.file("ca.pem")))
        #expect(response.status == 200)
        #expect(await Self.failure(fixture.plainURL(), TLSOptions())?.kind == .tls)
        let unknown = await Self.failure(
            fixture.plainURL(), TLSOptions(caBundle: fixture.file("other-ca.pem")))
        #expect(unknown?.kind == .tls)
    }

    @Test("mutual TLS: the server sees the client certificate, and refuses a client without one")
    func clientCertificate() async throws {
        let fixture = try TestServers.tls()
        let ca = fixture.file("ca.pem")
        let (_, reply) = try await Self.get(
            fixture.mutualURL(),
            TLSOptions(
                caBundle: ca, clientCertificate: fixture.file("client.pem"),
                clientKey: fixture.file("client-key.pem")))
        #expect(reply.clientCN == "courier-client")

        let passphrase = try String(
            contentsOf: fixture.file("client-passphrase.txt"), encoding: .utf8)
        let (_, encrypted) = try await Self.get(
            fixture.mutualURL(),
            TLSOptions(
                caBundle: ca, clientCertificate: fixture.file("client.pem"),
                clientKey: fixture.file("client-key-encrypted.pem"),
                clientKeyPassphrase: passphrase))
        #expect(encrypted.clientCN == "courier-client", "an encrypted key with its passphrase")

        #expect(await Self.failure(fixture.mutualURL(), TLSOptions(caBundle: ca))?.kind == .tls)
    }

    @Test("a matching pin passes; a wrong pin fails with .tls")
    func pinning() async throws {
        let fixture = try TestServers.tls()
        let ca = fixture.file("ca.pem")
        let pin = try fixture.pin()
        let (response, _) = try await Self.get(
            fixture.plainURL(), TLSOptions(caBundle: ca, pinnedPublicKeys: [pin]))
        #expect(response.status == 200)
        let wrong = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        let failed = await Self.failure(
            fixture.plainURL(), TLSOptions(caBundle: ca, pinnedPublicKeys: [wrong]))
        #expect(failed?.kind == .tls)
        // One of several pins is enough (key rotation).
        let (rotated, _) = try await Self.get(
            fixture.plainURL(), TLSOptions(caBundle: ca, pinnedPublicKeys: [wrong, pin]))
        #expect(rotated.status == 200)
    }

    @Test("a minimum version the server cannot speak fails with .tls")
    func minimumVersion() async throws {
        let fixture = try TestServers.tls()
        let ca = fixture.file("ca.pem")
        let (_, reply) = try await Self.get(
            fixture.tls12URL(), TLSOptions(caBundle: ca, minimumVersion: .tls1_2))
        #expect(reply.version == "TLSv1.2")
        let failed = await Self.failure(
            fixture.tls12URL(), TLSOptions(caBundle: ca, minimumVersion: .tls1_3))
        #expect(failed?.kind == .tls)
    }

    @Test("connections made under other TLS options are not reused for a pinned request")
    func noReuseAcrossOptions() async throws {
        let fixture = try TestServers.tls()
        let ca = fixture.file("ca.pem")
        let client = CurlHTTPClient()
        var open = HTTPRequest(url: fixture.plainURL())
        open.tls = TLSOptions(caBundle: ca)
        #expect(try await client.perform(open).status == 200)
        var pinned = open
        pinned.tls.pinnedPublicKeys = [
            "sha256//" + Data(repeating: 1, count: 32).base64EncodedString()
        ]
        await #expect(throws: HTTPError.self) { try await client.perform(pinned) }
    }

    @Test("URLSession refuses TLS options before sending, naming them")
    func urlSessionUnsupported() async throws {
        let fixture = try TestServers.tls()
        var request = HTTPRequest(url: fixture.plainURL())
        request.tls = TLSOptions(caBundle: fixture.file("ca.pem"), minimumVersion: .tls1_2)
        let error = await #expect(throws: HTTPError.self) {
            try await URLSessionHTTPClient().perform(request)
        }
        #expect(error?.kind == .unsupported)
        #expect(error?.message.contains("caBundle, minimumVersion") == true)
    }

    @Test("APIConfiguration.tls reaches every request")
    func apiConfiguration() async throws {
        struct Hello: APIRequest {
            typealias Response = Reply
            var path: String { "/hello" }
        }
        let fixture = try TestServers.tls()
        var configuration = APIConfiguration(baseURL: fixture.mutualURL())
        configuration.tls = TLSOptions(
            caBundle: fixture.file("ca.pem"), clientCertificate: fixture.file("client.pem"),
            clientKey: fixture.file("client-key.pem"))
        let client = DefaultAPIClient(httpClient: CurlHTTPClient(), configuration: configuration)
        let reply = try await client.perform(Hello())
        #expect(reply.clientCN == "courier-client")
    }

    @Test("the curl description carries the TLS flags, the passphrase redacted")
    func curlDescription() {
        var request = HTTPRequest(url: URL(string: "https://127.0.0.1:8443/x")!)
        request.tls = TLSOptions(
            caBundle: URL(fileURLWithPath: "/etc/ca.pem"),
            clientCertificate: URL(fileURLWithPath: "/etc/c.pem"),
            clientKey: URL(fileURLWithPath: "/etc/k.pem"), clientKeyPassphrase: "hunter2",
            pinnedPublicKeys: ["sha256//AAA=", "sha256//BBB="], minimumVersion: .tls1_3)
        let text = request.cURLDescription()
        #expect(
            text.hasSuffix(
                "--cacert '/etc/ca.pem' --cert '/etc/c.pem' --key '/etc/k.pem' --pass '<redacted>' --pinnedpubkey 'sha256//AAA=;sha256//BBB=' --tlsv1.3"
            ), "\(text)")
        #expect(!text.contains("hunter2"))
        #expect(request.cURLDescription(revealingSecrets: true).contains("--pass 'hunter2'"))
    }
}
