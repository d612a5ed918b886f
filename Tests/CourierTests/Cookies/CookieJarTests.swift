import Foundation
import Testing

@testable import Courier

/// The RFC 6265 rules of ``CookieJar``, as pure values: no network.
@Suite("cookie jar")
struct CookieJarTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func jar(_ fields: [String], from url: String) -> CookieJar {
        var jar = CookieJar()
        jar.store(setCookie: fields, from: URL(string: url)!, at: now)
        return jar
    }

    @Test func hostOnlyCookieGoesToItsHostOnly() {
        let jar = jar(["a=1"], from: "http://api.example.com/v1/login")
        #expect(jar.header(for: URL(string: "http://api.example.com/v1/x")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://www.api.example.com/v1/x")!, at: now) == nil)
        #expect(jar.header(for: URL(string: "http://example.com/v1/x")!, at: now) == nil)
        #expect(jar.header(for: URL(string: "http://api.example.com/v2")!, at: now) == nil, "path")
    }

    @Test func domainCookieGoesToSubdomains() {
        let jar = jar(["a=1; Domain=.Example.com; Path=/"], from: "http://api.example.com/")
        #expect(jar.header(for: URL(string: "http://www.example.com/x")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://example.com/")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://badexample.com/")!, at: now) == nil)
    }

    @Test func foreignAndPublicSuffixDomainsAreRefused() {
        #expect(jar(["a=1; Domain=other.com"], from: "http://example.com/").cookies.isEmpty)
        #expect(jar(["a=1; Domain=com"], from: "http://example.com/").cookies.isEmpty)
        #expect(jar(["a=1; Domain=0.1"], from: "http://127.0.0.1/").cookies.isEmpty, "IP")
        #expect(jar(["a=1; Domain=127.0.0.1"], from: "http://127.0.0.1/").cookies.count == 1)
    }

    @Test func pathMatchingIsByFolder() {
        let jar = jar(["a=1; Path=/docs"], from: "http://h.example/")
        #expect(jar.header(for: URL(string: "http://h.example/docs")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://h.example/docs/x")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://h.example/docsx")!, at: now) == nil)
        #expect(jar.header(for: URL(string: "http://h.example/")!, at: now) == nil)
    }

    @Test func secureCookiesNeedHTTPS() {
        #expect(jar(["a=1; Secure"], from: "http://h.example/").cookies.isEmpty)
        let jar = jar(["a=1; Secure; HttpOnly"], from: "https://h.example/")
        #expect(jar.header(for: URL(string: "https://h.example/")!, at: now) == "a=1")
        #expect(jar.header(for: URL(string: "http://h.example/")!, at: now) == nil)
        #expect(jar.cookies.first?.httpOnly == true)
    }

    @Test func expiryMaxAgeWinsAndZeroDeletes() {
        var jar = jar(
            [
                "a=1; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
                "b=2; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
            ],
            from: "http://h.example/")
        #expect(jar.cookies.map(\.name) == ["a"], "b had expired")
        #expect(jar.header(for: URL(string: "http://h.example/")!, at: now + 59) == "a=1")
        #expect(jar.header(for: URL(string: "http://h.example/")!, at: now + 61) == nil)
        jar.store(
            setCookie: ["a=gone; Max-Age=0"], from: URL(string: "http://h.example/")!, at: now)
        #expect(jar.cookies.isEmpty)
    }

    @Test func replacementKeepsCreationTimeAndOrderIsByPathThenAge() {
        var jar = jar(["a=1", "b=2; Path=/x"], from: "http://h.example/")
        jar.store(
            setCookie: ["a=3"], from: URL(string: "http://h.example/")!,
            at: now.addingTimeInterval(5))
        #expect(jar.cookies.count == 2)
        #expect(jar.cookies.first { $0.name == "a" }?.created == now)
        #expect(jar.header(for: URL(string: "http://h.example/x/y")!, at: now) == "b=2; a=3")
    }

    @Test(arguments: [
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894.0),
        ("Wednesday, 09-Jun-21 10:18:14 GMT", 1_623_233_894.0),
        ("Wed Jun  9 10:18:14 2021", 1_623_233_894.0),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("Wed, 29 Feb 2096 00:00:00 GMT", 3_981_312_000.0),
    ])
    func cookieDates(text: String, seconds: Double) {
        #expect(CookieDate.parse(text)?.timeIntervalSince1970 == seconds)
    }

    @Test func badDatesAreIgnored() {
        #expect(CookieDate.parse("not a date") == nil)
        #expect(CookieDate.parse("Wed, 32 Jun 2021 10:18:14 GMT") == nil)
        #expect(CookieDate.parse("Wed, 09 Jun 2021 25:18:14 GMT") == nil)
        #expect(CookieDate.parse("Mon, 29 Feb 2100 00:00:00 GMT") == nil, "2100 is no leap year")
        #expect(CookieDate.parse("Wed, 31 Apr 2021 00:00:00 GMT") == nil)
    }

    @Test func joinedFieldsAreSplitAtCookieBoundariesOnly() {
        #expect(
            SetCookie.values(["a=1; Expires=Wed, 09 Jun 2031 10:18:14 GMT, b=2; Path=/, c=3"])
                == ["a=1; Expires=Wed, 09 Jun 2031 10:18:14 GMT", "b=2; Path=/", "c=3"])
    }

    @Test func malformedCookiesAreIgnored() {
        #expect(
            jar(
                ["novalue", "=1", "a=\(String(repeating: "x", count: 5000))"],
                from: "http://h.example/"
            ).cookies.isEmpty)
    }

    @Test func capacityEvictsTheSoonestToExpire() {
        var jar = CookieJar(capacity: 2)
        let url = URL(string: "http://h.example/")!
        jar.store(setCookie: ["a=1; Max-Age=100", "b=2", "c=3; Max-Age=10"], from: url, at: now)
        #expect(Set(jar.cookies.map(\.name)) == ["a", "b"])
    }
}
