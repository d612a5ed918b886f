import Courier
import CourierTestSupport
import Foundation
import Testing

/// Encodable query and form fields, content-type checks and charsets, over each transport,
/// against the fixture server (exact bytes) and httpbin (a server that parses them).
@Suite("API content over each transport")
struct APIContentConformanceTests {
    struct Filter: Encodable, Sendable {
        let text: String
        let tags: [String]
        let owner: Owner
        let page: Int?
        struct Owner: Encodable, Sendable { let name: String }
    }

    let filter = Filter(
        text: "a+b & c=d é", tags: ["x", "y"], owner: .init(name: "ada"), page: nil)

    struct Echo: Decodable, Sendable {
        let query: String
        let headers: [[String]]
        let body: String
    }

    /// What httpbin says it parsed: one value or a list per name.
    struct Parsed: Decodable, Sendable {
        let args: [String: Value]?
        let form: [String: Value]?
        enum Value: Decodable, Sendable, Equatable {
            case one(String)
            case many([String])
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let one = try? container.decode(String.self) {
                    self = .one(one)
                } else {
                    self = .many(try container.decode([String].self))
                }
            }
        }
    }

    func client(_ transport: TransportKind, baseURL: URL) -> DefaultAPIClient {
        DefaultAPIClient(
            httpClient: transport.makeClient(), configuration: APIConfiguration(baseURL: baseURL))
    }

    func fixture(_ transport: TransportKind) throws -> DefaultAPIClient {
        client(transport, baseURL: try TestServers.fixture().baseURL)
    }

    func httpbin(_ transport: TransportKind) async throws -> DefaultAPIClient {
        client(transport, baseURL: try await TestServers.httpbin())
    }

    static let encodedFilter =
        "text=a%2Bb%20%26%20c%3Dd%20%C3%A9&tags%5B%5D=x&tags%5B%5D=y&owner%5Bname%5D=ada"

    @Test("an Encodable query is sent in coding order", arguments: TransportKind.allCases)
    func encodableQueryOnTheWire(transport: TransportKind) async throws {
        let echo: Echo = try await fixture(transport).perform(.get("/echo", query: filter))
        #expect(echo.query == Self.encodedFilter)
    }

    @Test("a form body is sent with its content type", arguments: TransportKind.allCases)
    func formBodyOnTheWire(transport: TransportKind) async throws {
        let echo: Echo = try await fixture(transport).perform(.post("/echo", form: filter))
        #expect(echo.body == Self.encodedFilter)
        #expect(echo.headers.contains(["Content-Type", "application/x-www-form-urlencoded"]))
    }

    @Test("httpbin parses the query and the form", arguments: TransportKind.allCases)
    func httpbinParsesThem(transport: TransportKind) async throws {
        let client = try await httpbin(transport)
        let query: Parsed = try await client.perform(.get("/get", query: filter))
        let expected: [String: Parsed.Value] = [
            "text": .one("a+b & c=d é"), "tags[]": .many(["x", "y"]), "owner[name]": .one("ada"),
        ]
        #expect(query.args == expected)
        let form: Parsed = try await client.perform(.post("/post", form: filter))
        #expect(form.form == expected)
    }

    struct Anything: Decodable, Sendable { let slideshow: [String: String]? }

    @Test("HTML where JSON was expected says so", arguments: TransportKind.allCases)
    func htmlForJSON(transport: TransportKind) async throws {
        let error = try await #require(throws: APIError.self) {
            let _: Anything = try await httpbin(transport).perform(.get("/html"))
        }
        #expect(error.kind == .decoding)
        #expect(
            error.message.hasPrefix(
                #"expected JSON, the server answered text/html (first bytes: "<!DOCTYPE html>"#),
            "\(error.message)")
    }

    @Test("an unacceptable content type is refused", arguments: TransportKind.allCases)
    func unacceptableContentType(transport: TransportKind) async throws {
        var request = Request<String>.get("/html")
        request.acceptableContentTypes = ["application/json", "application/*+json"]
        let client = try await httpbin(transport)
        let error = try await #require(throws: APIError.self) {
            try await client.perform(request)
        }
        #expect(error.kind == .unacceptableContentType)
        #expect(error.status == 200)
        #expect(error.contentType?.hasPrefix("text/html") == true)
        #expect(error.request?.url.path == "/html")
        var json = Request<Parsed>.get("/get")
        json.acceptableContentTypes = ["application/json"]
        _ = try await client.send(json)
    }

    @Test(
        "String responses decode by their charset",
        arguments: TransportKind.allCases.flatMap { transport in
            [
                (transport, "text/plain; charset=iso-8859-1", "636166e9", "café"),
                (transport, "text/plain; charset=windows-1252", "80209361", "€ “a"),
                (transport, "text/plain; charset=us-ascii", "706c61696e", "plain"),
                (transport, "text/plain; charset=utf-16", "fffe630061006600e900", "café"),
                (transport, "text/plain; charset=utf-16be", "00630061006600e9", "café"),
                (transport, "text/plain", "636166c3a9", "café"),
                (transport, "text/plain; charset=x-unknown", "636166c3a9ff", "café\u{FFFD}"),
            ]
        })
    func charsets(transport: TransportKind, type: String, hex: String, expected: String)
        async throws
    {
        let path = "/typed?type=\(URLBuilder.percentEncode(type))&hex=\(hex)"
        let text: String = try await fixture(transport).perform(.get(path))
        #expect(text == expected)
    }
}
