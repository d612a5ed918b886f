import Courier
import Foundation
import Testing

@Suite struct URLBuilderTests {
    @Test(arguments: [
        ("https://api.test", "/users", "https://api.test/users"),
        ("https://api.test/", "/users", "https://api.test/users"),
        ("https://api.test", "users", "https://api.test/users"),
        ("https://api.test/v1", "/users", "https://api.test/v1/users"),
        ("https://api.test/v1/", "/users", "https://api.test/v1/users"),
        ("https://api.test/v1/", "users/7", "https://api.test/v1/users/7"),
        ("https://api.test/v1", "", "https://api.test/v1"),
        ("https://api.test:8443/v1", "/a b", "https://api.test:8443/v1/a%20b"),
        ("https://api.test/v1", "http://other.test/x", "http://other.test/x"),
    ])
    func joining(base: String, path: String, expected: String) throws {
        let url = try URLBuilder.url(baseURL: URL(string: base)!, path: path)
        #expect(url.absoluteString == expected)
    }

    @Test func queryItemsAreEncodedAsData() throws {
        let url = try URLBuilder.url(
            baseURL: URL(string: "https://api.test")!, path: "/search",
            query: [
                URLQueryItem(name: "q", value: "a b+c&d=e"),
                URLQueryItem(name: "city", value: "Zürich"),
                URLQueryItem(name: "flag", value: nil),
                URLQueryItem(name: "emoji", value: "☕"),
            ])
        #expect(
            url.absoluteString
                == "https://api.test/search?q=a%20b%2Bc%26d%3De&city=Z%C3%BCrich&flag&emoji=%E2%98%95"
        )
        let decoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems
        #expect(decoded?.first?.value == "a b+c&d=e")
    }

    @Test func queryIsAppendedToAnExistingOne() throws {
        let url = try URLBuilder.url(
            baseURL: URL(string: "https://api.test")!, path: "/s?page=2",
            query: [URLQueryItem(name: "q", value: "x")])
        #expect(url.absoluteString == "https://api.test/s?page=2&q=x")
    }

    /// Trial III: a base URL's query (an API key) was dropped for a path with a query of its
    /// own, and kept for the others.
    @Test func theBaseQueryStaysBeforeThePathsAndTheItems() throws {
        let base = URL(string: "https://api.test/v1?key=K")!
        #expect(
            try URLBuilder.url(baseURL: base, path: "/s").absoluteString
                == "https://api.test/v1/s?key=K")
        #expect(
            try URLBuilder.url(
                baseURL: base, path: "/s?page=2", query: [URLQueryItem(name: "q", value: "x")]
            )
            .absoluteString == "https://api.test/v1/s?key=K&page=2&q=x")
        #expect(
            try URLBuilder.url(
                baseURL: base, path: "/s", query: [URLQueryItem(name: "q", value: "x")]
            )
            .absoluteString == "https://api.test/v1/s?key=K&q=x")
    }
}

@Suite struct URLBuilderPercentTests {
    @Test(arguments: [
        ("/sale/50%", "http://h.test/sale/50%25"),
        ("/50%off", "http://h.test/50%25off"),
        ("/a%20b", "http://h.test/a%20b"),
        ("/%", "http://h.test/%25"),
        ("/%zz%4", "http://h.test/%25zz%254"),
        ("/x?q=100%&r=%41", "http://h.test/x?q=100%25&r=%41"),
        ("/frag#ment", "http://h.test/frag%23ment"),
    ])
    func strayPercentIsEncodedNeverACrash(path: String, expected: String) throws {
        let url = try URLBuilder.url(baseURL: URL(string: "http://h.test")!, path: path)
        #expect(url.absoluteString == expected)
    }

    @Test func everyByteOfAPathMakesAURLOrAnError() {
        // No input may trap inside URLComponents.
        for byte in UInt8(0)...UInt8(127) {
            let path = "/a" + String(UnicodeScalar(byte)) + "%" + String(UnicodeScalar(byte))
            _ = try? URLBuilder.url(baseURL: URL(string: "http://h.test")!, path: path)
        }
    }
}

/// A path that starts with a scheme is an absolute URL: never joined to the base URL (where
/// the API's credentials would go with it), refused when it is not a usable http(s) URL.
@Suite("URLBuilder: absolute paths")
struct AbsolutePathTests {
    static let base = URL(string: "http://api.test/v1")!

    @Test(arguments: [
        "https://api.github.com  ---invalid", "ftp://files.example.com/a", "users:search",
        "mailto:a@b.test", "http://", "https:///nohost", "javascript:alert(1)",
    ])
    func refused(path: String) {
        do {
            let url = try URLBuilder.url(baseURL: Self.base, path: path)
            Issue.record("accepted as \(url)")
        } catch {
            #expect(error.kind == .invalidURL, "\(error)")
        }
    }

    @Test(arguments: [
        ("/users:search", "http://api.test/v1/users:search"),
        ("/v1/things/x:batchGet", "http://api.test/v1/v1/things/x:batchGet"),
        ("https://other.test/a?b=1", "https://other.test/a?b=1"),
        ("HTTP://other.test/a", "HTTP://other.test/a"),
        ("./a:b", "http://api.test/v1/./a:b"),
    ])
    func kept(path: String, expected: String) throws {
        #expect(try URLBuilder.url(baseURL: Self.base, path: path).absoluteString == expected)
    }

    @Test("a password in a URL that does not parse stays out of the message")
    func messageWithoutUserinfo() {
        do {
            _ = try URLBuilder.url(baseURL: Self.base, path: "https://me:hunter2@api test/a")
            Issue.record("accepted")
        } catch {
            #expect(!"\(error)".contains("hunter2"), "\(error)")
        }
    }
}
