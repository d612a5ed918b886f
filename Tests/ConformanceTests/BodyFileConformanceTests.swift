import Courier
import CourierTestSupport
import Foundation
import Testing

/// Bodies written to a file as they arrive (`HTTPRequest.bodyDestination`) and
/// `HTTPClient.download(_:to:)`: the same bytes, the same response and the same errors on both
/// transports.
@Suite("Bodies to files")
struct BodyFileConformanceTests {
    /// A fresh folder for one test.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-bodyfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func isPattern(_ data: Data) -> Bool {
        BytePattern.matches(data)
    }

    /// Names in `folder` other than `keep`: stray temporary files.
    static func others(in folder: URL, keep: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            !keep.contains($0)
        }
    }

    @Test(
        "a body goes to the file, past the memory cap, with an empty in-memory body",
        arguments: TransportKind.allCases, ["", "&chunked=1"])
    func streamsToFile(transport: TransportKind, chunked: String) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.bin")
        // Longer than what comes, so that a missing truncation would show.
        try Data(repeating: 0xEE, count: 3 << 20).write(to: file)
        let size = 2 << 20
        var request = HTTPRequest(url: server.url("/bytes?n=\(size)\(chunked)"))
        request.bodyDestination = .file(file)
        // A 1 MiB memory cap: a body going to a file has none.
        let response = try await transport.makeClient(maxResponseBytes: 1 << 20).perform(request)
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.savedBody == SavedBody(url: file, byteCount: size))
        #expect(response.bodyCount == size)
        let saved = try Data(contentsOf: file)
        #expect(saved.count == size)
        #expect(Self.isPattern(saved))
    }

    @Test("both transports write the same file and report the same response")
    func parity() async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var seen: [TransportKind: (Int, String?, Data, Int?)] = [:]
        for transport in TransportKind.allCases {
            let file = folder.appendingPathComponent("\(transport).bin")
            var request = HTTPRequest(url: server.url("/bytes?n=123457&chunked=1"))
            request.bodyDestination = .file(file)
            let response = try await transport.makeClient().perform(request)
            seen[transport] = (
                response.status, response.headers["Content-Type"], try Data(contentsOf: file),
                response.savedBody?.byteCount
            )
        }
        let curl = try #require(seen[.curl])
        let session = try #require(seen[.urlSession])
        #expect(curl.0 == session.0)
        #expect(curl.1 == session.1)
        #expect(curl.2 == session.2)
        #expect(curl.3 == session.3)
        #expect(curl.3 == 123_457)
    }

    @Test("a 3xx is returned with its own body in the file", arguments: TransportKind.allCases)
    func redirectBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("hop.bin")
        var request = HTTPRequest(url: server.url("/redirect?to=/bytes%3Fn%3D5000"))
        request.bodyDestination = .file(file)
        let hop = try await transport.makeClient().perform(request)
        #expect(hop.status == 302)
        #expect(hop.savedBody?.byteCount == 0)
        // Followed by the middleware: the file holds the final body only.
        let followed = try await RedirectingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient())
        )
        .perform(request)
        #expect(followed.status == 200)
        #expect(followed.redirectCount == 1)
        #expect(try Data(contentsOf: file).count == 5000)
    }

    @Test(
        "a file that cannot be made is a .file error before anything is sent",
        arguments: TransportKind.allCases)
    func cannotCreate(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = UUID().uuidString
        var request = HTTPRequest(url: server.url("/bytes?n=10&key=\(key)"))
        request.bodyDestination = .file(folder.appendingPathComponent("missing/body.bin"))
        let error = await #expect(throws: HTTPError.self) {
            try await transport.makeClient().perform(request)
        }
        #expect(error?.kind == .file)
        #expect(error?.message.contains("missing/body.bin: No such file or directory") == true)
        #expect(try await ServerHits.of(key, on: server).count == 0, "nothing was sent")
    }

    @Test("a symbolic link in the file's place is refused", arguments: TransportKind.allCases)
    func refusesSymlink(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let victim = folder.appendingPathComponent("victim.txt")
        try Data("keep me".utf8).write(to: victim)
        let link = folder.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        var request = HTTPRequest(url: server.url("/bytes?n=10"))
        request.bodyDestination = .file(link)
        let error = await #expect(throws: HTTPError.self) {
            try await transport.makeClient().perform(request)
        }
        #expect(error?.kind == .file)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me")
    }

    @Test(
        "download replaces the destination whole on 2xx, leaves it on other statuses",
        arguments: TransportKind.allCases)
    func download(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("archive.bin")
        try Data("old".utf8).write(to: destination)
        let client = RedirectingHTTPClient(
            wrapping: AnyHTTPClient(transport.makeClient(maxResponseBytes: 1 << 10)))

        let failed = try await client.download(
            HTTPRequest(url: server.url("/error-json")), to: destination)
        #expect(!failed.isSuccess)
        #expect(failed.savedBody == nil)
        #expect(!failed.body.isEmpty, "the error body is in memory, as perform gives it")
        #expect(try String(contentsOf: destination, encoding: .utf8) == "old")

        let size = 1 << 20
        let response = try await client.download(
            HTTPRequest(url: server.url("/redirect?to=/bytes%3Fn%3D\(size)")), to: destination)
        #expect(response.status == 200)
        #expect(response.savedBody == SavedBody(url: destination, byteCount: size))
        #expect(Self.isPattern(try Data(contentsOf: destination)))
        #expect(try Self.others(in: folder, keep: ["archive.bin"]).isEmpty, "no temporary left")
    }

    @Test(
        "download leaves the destination as it was when the body is cut short",
        arguments: TransportKind.allCases)
    func downloadTruncated(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("data.bin")
        try Data("previous".utf8).write(to: destination)
        await #expect(throws: HTTPError.self) {
            try await transport.makeClient().download(
                HTTPRequest(url: server.url("/truncated")), to: destination)
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "previous")
        #expect(try Self.others(in: folder, keep: ["data.bin"]).isEmpty, "no temporary left")
    }

    @Test("download works with a client that ignores the destination")
    func downloadFromMemoryClient() async throws {
        struct Fixed: HTTPClient {
            func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
                HTTPResponse(status: 200, body: Data("in memory".utf8), url: request.url)
            }
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("x.txt")
        let response = try await Fixed().download(
            HTTPRequest(url: URL(string: "http://127.0.0.1:9/x")!), to: destination)
        #expect(response.savedBody == SavedBody(url: destination, byteCount: 9))
        #expect(response.body.isEmpty)
        #expect(try String(contentsOf: destination, encoding: .utf8) == "in memory")
    }
}

extension BodyFileConformanceTests {
    @Test(
        "a write that fails mid-body (a full disk) is a .file error",
        arguments: TransportKind.allCases)
    func diskFull(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        var request = HTTPRequest(url: server.url("/bytes?n=200000"))
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        request.bodyDestination = .file(URL(fileURLWithPath: "/dev/full"))
        let error = await #expect(throws: HTTPError.self) {
            try await transport.makeClient().perform(request)
        }
        #expect(error?.kind == .file)
        #expect(error?.message == "cannot write /dev/full: No space left on device")
    }
}
