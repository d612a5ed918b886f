import Foundation
import Testing

@testable import Courier

@Suite struct MediaTypeTests {
    @Test func parsesTypeSubtypeAndParameters() throws {
        let type = try #require(MediaType(#"Text/HTML ; Charset="UTF-8"; q=1"#))
        #expect(type.essence == "text/html")
        #expect(type.charset == "utf-8")
        #expect(type.parameters["q"] == "1")
    }

    @Test(arguments: ["", "json", "/json", "application/", "a/b/c"])
    func refusesWhatIsNotAMediaType(_ text: String) {
        #expect(MediaType(text) == nil)
    }

    @Test(arguments: [
        ("application/json", "application/json", true),
        ("application/json; charset=utf-8", "application/json", true),
        ("APPLICATION/JSON", "application/json;charset=utf-8", true),
        ("application/json", "application/*", true),
        ("application/json", "*/*", true),
        ("application/problem+json", "application/*+json", true),
        ("application/json", "application/*+json", false),
        ("text/html", "application/json", false),
        ("text/html", "application/*", false),
        ("application/jsonx", "application/json", false),
    ])
    func matchesPatterns(_ type: String, _ pattern: String, _ expected: Bool) throws {
        let type = try #require(MediaType(type))
        let pattern = try #require(MediaType(pattern))
        #expect(type.matches(pattern) == expected)
    }

    @Test func knowsJSON() {
        #expect(MediaType("application/json")?.isJSON == true)
        #expect(MediaType("application/vnd.github+json")?.isJSON == true)
        #expect(MediaType("text/html")?.isJSON == false)
    }
}
