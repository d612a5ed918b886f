import Courier
import CourierTestSupport
import Foundation
import Testing

/// Streamed request bodies (`HTTPRequest.streamedBody`): a file upload and a multipart form go
/// out with `Content-Length`, the same bytes and the same header fields on both transports,
/// and fail the same way.
@Suite("Uploads")
struct UploadConformanceTests {
    struct Digest: Decodable, Equatable {
        let method: String
        let length: Int
        let chunked: Bool
        let sha256: String
        let headers: [[String]]

        func header(_ name: String) -> String? {
            headers.first { $0[0].lowercased() == name.lowercased() }?[1]
        }
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `size` bytes of a repeating pattern, written in 1 MiB pieces.
    static func patternFile(_ url: URL, size: Int) throws {
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let block = BytePattern.data(count: 1 << 20)
        var left = size
        while left > 0 {
            let count = min(left, block.count)
            try handle.write(contentsOf: block.prefix(count))
            left -= count
        }
    }

    /// `sha256sum` of a file: an implementation that is not ours.
    static func sha256(of url: URL) async throws -> String {
        let (_, output) = try await ChildProcess.output("/usr/bin/sha256sum", [url.path])
        return String(decoding: output.prefix(64), as: UTF8.self)
    }

    @Test("a 48 MiB file is sent whole, with Content-Length, on both transports alike")
    func fileUpload() async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        let size = 48 << 20
        try Self.patternFile(file, size: size)
        let expected = try await Self.sha256(of: file)
        var seen: [TransportKind: Digest] = [:]
        for transport in TransportKind.allCases {
            var request = HTTPRequest(
                url: server.url("/digest"), method: .put,
                headers: ["Content-Type": "application/octet-stream"])
            request.streamedBody = .file(file)
            let response = try await transport.makeClient().perform(request)
            #expect(response.status == 200, "\(transport)")
            let digest = try JSONDecoder().decode(Digest.self, from: response.body)
            #expect(digest.method == "PUT", "\(transport)")
            #expect(digest.length == size, "\(transport)")
            #expect(!digest.chunked, "\(transport)")
            #expect(digest.sha256 == expected, "\(transport)")
            #expect(digest.header("Content-Length") == String(size), "\(transport)")
            #expect(digest.header("Expect") == nil, "\(transport): no 100-continue wait")
            seen[transport] = digest
        }
        let names = seen.mapValues { $0.headers.map { $0[0].lowercased() }.sorted() }
        #expect(names[.curl] == names[.urlSession], "the same header fields on the wire")
        #expect(FileManager.default.fileExists(atPath: file.path), "the caller's file is kept")
    }

    @Test(
        "a multipart form is the exact bytes RFC 7578 asks for", arguments: TransportKind.allCases)
    func multipartBytes(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("notes.txt")
        try Data("line one\nline two\n".utf8).write(to: file)
        var form = MultipartFormData(boundary: "XyZ")
        form.append(field: "title", "Holiday \"2026\"")
        form.append(file: file, name: "notes", contentType: "text/plain")
        form.append(
            data: Data("{}".utf8), name: "meta", filename: "m.json", contentType: "application/json"
        )
        var request = HTTPRequest(url: server.url("/echo"), method: .post)
        request.setBody(form)
        let response = try await transport.makeClient().perform(request)
        struct Echo: Decodable {
            let body: String
            let headers: [[String]]
        }
        let echo = try JSONDecoder().decode(Echo.self, from: response.body)
        let expected = [
            "--XyZ", #"Content-Disposition: form-data; name="title""#, "", #"Holiday "2026""#,
            "--XyZ", #"Content-Disposition: form-data; name="notes"; filename="notes.txt""#,
            "Content-Type: text/plain", "", "line one\nline two\n",
            "--XyZ", #"Content-Disposition: form-data; name="meta"; filename="m.json""#,
            "Content-Type: application/json", "", "{}", "--XyZ--", "",
        ].joined(separator: "\r\n")
        #expect(echo.body == expected)
        #expect(
            echo.headers.first { $0[0] == "Content-Type" }?[1]
                == "multipart/form-data; boundary=XyZ")
    }

    @Test("httpbin parses the form's fields and files", arguments: TransportKind.allCases)
    func multipartHTTPBin(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.csv")
        try Data("a,b\n1,2\n".utf8).write(to: file)
        var form = MultipartFormData()
        form.append(field: "name", "Zoë & co")
        form.append(field: "empty", "")
        form.append(file: file, name: "report", contentType: "text/csv")
        var request = HTTPRequest(url: base.appendingPathComponent("post"), method: .post)
        request.setBody(form)
        let response = try await transport.makeClient().perform(request)
        struct Post: Decodable {
            let form: [String: String]
            let files: [String: String]
        }
        #expect(response.status == 200)
        let post = try JSONDecoder().decode(Post.self, from: response.body)
        #expect(post.form == ["name": "Zoë & co", "empty": ""])
        #expect(post.files == ["report": "a,b\n1,2\n"])
    }

    @Test(
        "a missing file fails with .file before anything is sent or truncated",
        arguments: TransportKind.allCases)
    func missingFile(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("answer.json")
        try Data("keep me".utf8).write(to: destination)
        let key = FixtureServer.uniqueKey("missing-upload")
        var request = HTTPRequest(url: server.url("/echo?key=\(key)"), method: .post)
        request.streamedBody = .file(folder.appendingPathComponent("nope.bin"))
        request.bodyDestination = .file(destination)
        do {
            _ = try await transport.makeClient().perform(request)
            Issue.record("a missing file must fail")
        } catch let error as HTTPError {
            #expect(error.kind == .file)
            #expect(error.message.contains("nope.bin"))
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "keep me")
        #expect(try await ServerHits.of(key, on: server).count == 0, "nothing was sent")
    }

    @Test("body and streamedBody together are refused", arguments: TransportKind.allCases)
    func bothBodies(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        var request = HTTPRequest(url: server.url("/echo"), method: .post, body: Data("x".utf8))
        request.streamedBody = StreamedBody(parts: [.data(Data("y".utf8))])
        await #expect {
            _ = try await transport.makeClient().perform(request)
        } throws: { ($0 as? HTTPError)?.kind == .invalidRequest }
    }
}
