import Courier
import CourierTestSupport
import Foundation
import Testing

/// Compressed bodies read as curl(1) and browsers read them, on both transports: Hurl's
/// compression cases and Alamofire's `Accept-Encoding` expectation, restated as our own
/// against the fixture's `/cut/...` routes and httpbin (docs/transports.md, "Compressed
/// responses"). A body whose end the transport could check is checked (curl: every coding it
/// offers); where it cannot (URLSession), the response says so in `bodyEndUnchecked`.
@Suite("Compressed responses")
struct CompressionConformanceTests {
    /// The codings both transports offer and decode.
    static let codings = ["gzip", "deflate", "br", "zstd"]
    /// The fixture's two framings of a compressed body: chunked, and with a Content-Length.
    static let framings = ["gzip-chunked", "gzip-length"]
    /// What Alamofire sends by default; Hurl's `--compressed` asks for the same three codings.
    static let alamofireAcceptEncoding = "br;q=1.0, gzip;q=0.9, deflate;q=0.8"

    /// The fixture's `/cut/` body: a JSON array of 2,000 items.
    static func items(_ body: Data) -> Int? {
        (try? JSONSerialization.jsonObject(with: body) as? [Any])?.count
    }

    @Test(
        "a whole gzip, deflate, br or zstd body is read whole",
        arguments: TransportKind.allCases, codings)
    func wholeBody(transport: TransportKind, coding: String) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        for framing in Self.framings {
            let url = server.url("/cut/\(framing)?whole=1&encoding=\(coding)")
            let response = try await client.perform(HTTPRequest(url: url))
            #expect(response.status == 200)
            #expect(Self.items(response.body) == 2000, "\(framing) \(coding): the whole body")
            #expect(response.headers["Content-Encoding"] == coding, "the headers are the wire's")
            // curl checked the stream's end; URLSession could not, and says so.
            #expect(
                response.bodyEndUnchecked == (transport == .curl ? nil : coding),
                "\(framing) \(coding)")
        }
    }

    @Test(
        "a whole compressed body is decoded into a file and a stream",
        arguments: TransportKind.allCases, codings)
    func wholeBodyToFileAndStream(transport: TransportKind, coding: String) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let url = server.url("/cut/gzip-chunked?whole=1&encoding=\(coding)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-\(coding)-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        var request = HTTPRequest(url: url)
        request.bodyDestination = .file(file)
        let saved = try await client.perform(request)
        #expect(Self.items(try Data(contentsOf: file)) == 2000)
        #expect(saved.bodyEndUnchecked == (transport == .curl ? nil : coding))
        let streamed = try await client.stream(HTTPRequest(url: url))
        #expect(Self.items(try await streamed.body.collect()) == 2000)
    }

    @Test(
        "httpbin's /gzip, /deflate and /brotli read on both, with the default offer or Alamofire's",
        arguments: TransportKind.allCases, ["/gzip", "/deflate", "/brotli"])
    func httpbin(transport: TransportKind, path: String) async throws {
        let base = try await TestServers.httpbin()
        let client = transport.makeClient()
        for offer in [nil, Self.alamofireAcceptEncoding] {
            var request = HTTPRequest(url: base.appendingPathComponent(path))
            if let offer { request.headers["Accept-Encoding"] = offer }
            let response = try await client.perform(request)
            #expect(response.status == 200)
            let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(object?["method"] as? String == "GET", "decoded JSON from \(path)")
            // httpbin echoes what it received: the caller's offer untouched, else ours.
            let headers = object?["headers"] as? [String: String]
            #expect(
                headers?["Accept-Encoding"] == offer ?? WireRequest.acceptEncoding,
                "\(path): \(headers ?? [:])")
            #expect(response.headers["Content-Encoding"] != nil, "the headers are the wire's")
        }
    }

    /// On URLSession the same bytes are read, their end reported unchecked: the limit, stated
    /// in `TruncationConformanceTests.cutStreamOnURLSession`.
    @Test(
        "a cut br or zstd stream is refused on curl as a cut gzip or deflate one is",
        arguments: codings, framings)
    func cutStreamOnCurl(coding: String, framing: String) async throws {
        let server = try TestServers.fixture()
        let url = server.url("/cut/\(framing)?encoding=\(coding)")
        let error = try await #require(throws: HTTPError.self) {
            try await TransportKind.curl.makeClient().perform(HTTPRequest(url: url))
        }
        #expect(error.kind == .network, "\(error)")
        #expect(
            error.message == "the \(coding) stream ended before its end: the body is cut",
            "\(error)")
    }

    @Test(
        "both transports offer gzip, deflate, br and zstd by default (checked at the server)",
        arguments: TransportKind.allCases)
    func defaultOffer(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let echo = try Echo(try await client.perform(HTTPRequest(url: server.url("/echo"))))
        #expect(echo.values(for: "Accept-Encoding") == ["gzip, deflate, br, zstd"])
        // Alamofire's expectation: br, gzip and deflate are offered.
        let offered = Set(
            echo.values(for: "Accept-Encoding").joined(separator: ",").split(separator: ",").map {
                $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces)
            })
        #expect(offered.isSuperset(of: ["br", "gzip", "deflate"]))
        #expect(transport.acceptEncoding == "gzip, deflate, br, zstd")

        // A caller's own offer goes out as given, and the body is read.
        let own = try Echo(
            try await client.perform(
                HTTPRequest(
                    url: server.url("/echo"),
                    headers: ["Accept-Encoding": Self.alamofireAcceptEncoding])))
        #expect(own.values(for: "Accept-Encoding") == [Self.alamofireAcceptEncoding])
    }

    /// A trial saw URLSession pass on libcurl's own words ("Error while processing content
    /// unencoding: …") where curl said "the gzip stream is not valid: …".
    @Test(
        "a body its Content-Encoding does not decode is the same error on both transports",
        arguments: TransportKind.allCases)
    func undecodableBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: server.url("/cut/not-gzip")))
        }
        #expect(error.kind == .network, "\(error)")
        #expect(error.message == "the gzip stream is not valid: incorrect header check", "\(error)")
    }

    @Test(
        "a coding neither transport decodes is refused alike", arguments: TransportKind.allCases)
    func undecodedCoding(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let url = server.url("/cut/gzip-length?whole=1&encoding=compress")
        let error = try await #require(throws: HTTPError.self) {
            try await transport.makeClient().perform(HTTPRequest(url: url))
        }
        #expect(error.kind == .network, "\(error)")
    }

    @Test(
        "a body that is not compressed has its end checked on both",
        arguments: TransportKind.allCases)
    func plainBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().perform(
            HTTPRequest(url: server.url("/cut/gzip-length?whole=1&encoding=identity")))
        #expect(Self.items(response.body) == 2000)
        #expect(response.bodyEndUnchecked == nil)
    }

    @Test(
        "a 401 with WWW-Authenticate keeps its body (in memory, to a file, streamed)",
        arguments: TransportKind.allCases, ["Basic", "Digest", "Bearer"])
    func challengeKeepsBody(transport: TransportKind, scheme: String) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        let url = server.url("/challenge?scheme=\(scheme)")
        let expectedObject = [
            "error": "unauthorized", "scheme": scheme,
            "detail": "this body is the server's explanation",
        ]
        let decoded = { (body: Data) in
            (try? JSONSerialization.jsonObject(with: body)) as? [String: String]
        }

        let response = try await client.perform(HTTPRequest(url: url))
        #expect(response.status == 401)
        #expect(response.headers["WWW-Authenticate"]?.hasPrefix(scheme) == true)
        #expect(decoded(response.body) == expectedObject, "the 401's body, whole")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-401-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        var toFile = HTTPRequest(url: url)
        toFile.bodyDestination = .file(file)
        let saved = try await client.perform(toFile)
        #expect(saved.status == 401)
        #expect(decoded(try Data(contentsOf: file)) == expectedObject)
        #expect(saved.savedBody?.byteCount == (try Data(contentsOf: file)).count)

        let streamed = try await client.stream(HTTPRequest(url: url))
        #expect(streamed.status == 401)
        #expect(decoded(try await streamed.body.collect()) == expectedObject)
    }
}
