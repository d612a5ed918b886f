import Courier
import CourierTestSupport
import Foundation
import Testing

/// `download`, `stream` and progress for an `APIRequest` through `DefaultAPIClient`: the same
/// stack as `perform` (base URL, auth, token refresh), on both transports.
@Suite("API-layer transfers")
struct APITransferConformanceTests {
    struct Users: APIRequest {
        typealias Response = Data
        var path: String { "/v1/users" }
    }

    struct Bytes: APIRequest {
        typealias Response = Data
        var count: Int
        var path: String { "/bytes" }
        var queryItems: [URLQueryItem]? { [URLQueryItem(name: "n", value: String(count))] }
    }

    struct Upload: APIRequest {
        typealias Response = Data
        var file: URL
        var path: String { "/digest" }
        var method: HTTPMethod { .post }
        var content: APIRequestBody? { .file(file, contentType: "application/octet-stream") }
    }

    static func client(_ transport: TransportKind, _ server: FixtureServer, auth: Authentication)
        -> DefaultAPIClient
    {
        DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(baseURL: server.url("/"), auth: auth))
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-apitransfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(
        "download: a refreshed token, the body in the file, progress told; a 401 leaves it",
        arguments: TransportKind.allCases)
    func download(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("users.json")
        let client = Self.client(transport, server, auth: .provider(SeedTokens()))
        let received = Locked<Int64>(0)
        let response = try await client.download(Users(), to: file) { progress in
            received.withLock { $0 = max($0, progress.received) }
        }
        let expected = try await client.perform(Users())
        #expect(response.status == 200)
        #expect(try Data(contentsOf: file) == expected)
        #expect(received.withLock { $0 } == Int64(expected.count))

        let refused = Self.client(transport, server, auth: .bearer("wrong"))
        do {
            try await refused.download(Users(), to: file)
            Issue.record("a 401 was accepted")
        } catch let error as APIError {
            #expect(error.kind == .unacceptableStatus)
            #expect(error.status == 401)
            #expect(String(decoding: error.body ?? Data(), as: UTF8.self).contains("unauthorized"))
        }
        #expect(try Data(contentsOf: file) == expected, "the file is left as it was")
    }

    @Test(
        "stream: through the token refresh, the bytes as they come; a refused status throws",
        arguments: TransportKind.allCases)
    func stream(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = Self.client(transport, server, auth: .provider(SeedTokens()))
        let users = try await client.stream(Users())
        #expect(users.status == 200)
        #expect(try await users.body.collect() == (try await client.perform(Users())))
        let big = try await client.stream(Bytes(count: 3 << 20))
        #expect(BytePattern.matches(try await big.body.collect()))

        let refused = Self.client(transport, server, auth: .bearer("wrong"))
        do {
            _ = try await refused.stream(Users())
            Issue.record("a 401 was accepted")
        } catch let error as APIError {
            #expect(error.status == 401)
            #expect(error.body == Data(#"{"error": "unauthorized"}"#.utf8))
        }
    }

    @Test("upload progress for an API request's file body", arguments: TransportKind.allCases)
    func uploadProgress(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        let size = 2 << 20
        try Data(repeating: 7, count: size).write(to: file)
        let client = Self.client(transport, server, auth: .bearer("x"))
        let sent = Locked<(Int64, Int64?)>((0, nil))
        let answer = try await client.perform(Upload(file: file)) { progress in
            sent.withLock { $0 = (max($0.0, progress.sent), progress.totalToSend) }
        }
        let digest = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
        #expect(digest?["length"] as? Int == size)
        #expect(sent.withLock { $0.0 } == Int64(size))
        #expect(sent.withLock { $0.1 } == Int64(size))
    }
}
