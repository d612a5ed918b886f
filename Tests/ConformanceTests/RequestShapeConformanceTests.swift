import Courier
import CourierTestSupport
import Foundation
import Testing

/// Requests the transports must treat alike before anything is sent: a GET with a body, an
/// absolute path that is not a usable URL, and a caller's multipart `Content-Type`.
@Suite("Request shapes")
struct RequestShapeConformanceTests {
    @Test(
        "a GET or HEAD with a body is refused before sending, on both transports",
        arguments: TransportKind.allCases, [HTTPMethod.get, .head])
    func getWithBody(transport: TransportKind, method: HTTPMethod) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("getbody")
        let client = transport.makeClient()
        var streamed = HTTPRequest(url: server.url("/echo?key=\(key)"), method: method)
        streamed.streamedBody = StreamedBody(parts: [.data(Data("{}".utf8))])
        for request in [
            HTTPRequest(url: server.url("/echo?key=\(key)"), method: method, body: Data("{}".utf8)),
            streamed,
        ] {
            do {
                _ = try await client.perform(request)
                Issue.record("sent")
            } catch let error as HTTPError {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains("cannot carry a body"), "\(error)")
            }
        }
        // An empty body is no body: sent, without `Content-Length: 0` (trial KKK: curl sent
        // one, URLSession none).
        let empty = try await client.perform(
            HTTPRequest(url: server.url("/echo?key=\(key)"), method: method, body: Data()))
        #expect(empty.status == 200)
        let hits = try await ServerHits.of(key, on: server).requests
        #expect(hits.count == 1)
        #expect(hits.first?.header("Content-Length") == nil, "\(hits.first?.headers ?? [])")
    }

    /// Trial KKK: a caller's `Content-Length: 2` before a 5-byte body was sent as given, and
    /// the body's rest read by the server as the start of the next request on the connection
    /// (`lloGET /echo`), whose answers then went to the wrong requests; a longer one hung.
    /// Refused before sending, on both transports; one that says the body's size is sent.
    @Test(
        "a Content-Length that is not the body's size is refused before sending",
        arguments: TransportKind.allCases)
    func contentLengthNotTheBodysSize(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("content-length")
        let client = transport.makeClient()
        for (value, body) in [("2", Data("hello".utf8)), ("50", Data("hello".utf8)), ("1", nil)] {
            var request = HTTPRequest(
                url: server.url("/echo?key=\(key)"), method: .put, body: body)
            request.headers.add("Content-Length", value)
            do {
                _ = try await client.perform(request)
                Issue.record("sent with Content-Length \(value)")
            } catch let error as HTTPError {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains("is not the body's size"), "\(error)")
            }
        }
        var right = HTTPRequest(
            url: server.url("/echo?key=\(key)"), method: .put, body: Data("hello".utf8))
        right.headers.add("Content-Length", "5")
        #expect(try await client.perform(right).status == 200)
        let next = try await client.perform(
            HTTPRequest(url: server.url("/echo?key=\(key)&after=1")))
        #expect(next.status == 200)
        let hits = try await ServerHits.of(key, on: server).requests
        #expect(hits.map(\.method) == ["PUT", "GET"], "\(hits.map(\.method))")
        #expect(hits.first?.body == "hello")
    }

    struct Anything: APIRequest {
        typealias Response = Data
        var path: String
    }

    @Test(
        "an absolute path that is not a usable http(s) URL never reaches the API's host",
        arguments: TransportKind.allCases)
    func unusableAbsolutePath(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("abs")
        // The base's query is kept on every joined URL: a path sent there would carry the key.
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(),
            configuration: APIConfiguration(
                baseURL: server.url("/?key=\(key)"), auth: .bearer("api-secret")))
        for path in ["https://api.github.com  ---invalid", "ftp://files.example.com/a"] {
            do {
                _ = try await client.perform(Anything(path: path))
                Issue.record("\(path) was sent")
            } catch let error as APIError {
                #expect(error.kind == .invalidURL, "\(error)")
            }
        }
        #expect(try await ServerHits.of(key, on: server).requests.isEmpty)
    }

    struct Upload: APIRequest {
        typealias Response = Data
        var form: MultipartFormData
        var contentType: String
        var path: String { "/post" }
        var method: HTTPMethod { .post }
        var content: APIRequestBody? { .multipart(form) }
        var headers: [String: String]? { ["Content-Type": contentType] }
    }

    @Test(
        "a caller's multipart/form-data Content-Type keeps the form's boundary (httpbin parses it)",
        arguments: TransportKind.allCases)
    func multipartContentType(transport: TransportKind) async throws {
        let base = try await TestServers.httpbin()
        let client = DefaultAPIClient(
            httpClient: transport.makeClient(), configuration: APIConfiguration(baseURL: base))
        var form = MultipartFormData()
        form.append(field: "name", "Zoë")
        struct Post: Decodable { let form: [String: String] }
        for contentType in [
            "multipart/form-data", "Multipart/Form-Data; charset=utf-8",
            "multipart/form-data; boundary=\(form.boundary)",
        ] {
            let body = try await client.perform(Upload(form: form, contentType: contentType))
            #expect(try JSONDecoder().decode(Post.self, from: body).form == ["name": "Zoë"])
        }
        do {
            _ = try await client.perform(
                Upload(form: form, contentType: "multipart/form-data; boundary=other"))
            Issue.record("a boundary the body does not use was sent")
        } catch let error as APIError {
            #expect(error.kind == .invalidRequest)
        }
    }
}
