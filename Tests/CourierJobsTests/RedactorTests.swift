import Courier
import Foundation
import Testing

@testable import CourierJobs

/// Every form a secret can take on the way out is found and replaced.
@Suite("Redactor")
struct RedactorTests {
    static let secret = #"p@ss w"rd\/é"#
    let redactor = Redactor(secrets: [secret, "ab"])

    @Test(arguments: [
        #"p@ss w"rd\/é"#,  // raw
        #"p@ss w\"rd\\\/\u00e9"#,  // JSON-escaped, every escape JSON allows
        #"p@ss w\"rd\\/é"#,  // JSON-escaped, minimal
        "p%40ss%20w%22rd%5C%2F%C3%A9",  // percent-encoded in full
        "p@ss%20w%22rd%5C/%C3%A9",  // in part
        "p@ss+w%22rd%5C%2F%C3%A9",  // form-encoded
        "p%2540ss%2520w%2522rd%255C%252F%25C3%25A9",  // percent-encoded twice
        #"p%40ss%20w%22rd%5C%2F%C3%A9"#,
    ])
    func everyFormIsRedacted(form: String) {
        let scrubbed = redactor.scrub("before \(form) after")
        #expect(scrubbed == "before <redacted> after", "\(form) → \(scrubbed)")
    }

    /// A secret that holds an escape of one kind among characters another kind escapes: only
    /// one kind is decoded to find it (a trial found `ab"cd%20` whole in a logged body).
    @Test(arguments: [#"ab"cd%20"#, #"ab\cd%41"#, #"a\c $d&e?f#g/h+i%20"#])
    func aSecretWithAnEscapeOfItsOwnIsFoundInABody(secret: String) throws {
        let redactor = Redactor(secrets: [secret])
        let text = "raw=\(secret)"
        let json = String(decoding: try JSONEncoder().encode(["s": secret]), as: UTF8.self)
        for body in [text, json] {
            // As the log writes a body: a JSON string in the line.
            let line = JSONWriter.string(.object([("requestBody", .string(body))]))
            let scrubbed = String(decoding: redactor.scrubJSON(Array(line.utf8)), as: UTF8.self)
            #expect(scrubbed.contains("<redacted>"), "\(scrubbed)")
            for form in ["cd", "\\c", "d&e"] where secret.contains(form) {
                #expect(!scrubbed.contains(form), "\(scrubbed)")
            }
        }
    }

    /// In a task's `url`, Foundation escapes a secret's `\` and space and, once it escapes
    /// anything, its `%41` too: a form no decoding of the text gives back.
    @Test(arguments: [#"ab\cd%41"#, #"a\c $d&e?f#g/h+i%20"#])
    func aSecretAsAURLWritesItIsFound(secret: String) throws {
        let redactor = Redactor(secrets: [secret])
        for prefix in ["http://127.0.0.1:9/u/", "http://127.0.0.1:9/u?z="] {
            let url = try #require(URL(string: prefix + secret)).absoluteString
            let scrubbed = redactor.scrub(url)
            #expect(scrubbed == prefix + "<redacted>", "\(url) → \(scrubbed)")
        }
    }

    @Test func shortValuesAreNotSearchedFor() {
        #expect(redactor.scrub("tab about ab") == "tab about ab")
    }

    @Test func jsonLinesStayValidJSON() throws {
        let line = JSONWriter.string(
            .object([
                ("url", .string("http://h/x?s=p%40ss%20w%22rd%5C%2F%C3%A9")),
                ("body", .string(#"{"s":"p@ss w\"rd\\/é"}"#)), ("n", .int(12)),
            ]))
        let scrubbed = String(decoding: redactor.scrubJSON(Array(line.utf8)), as: UTF8.self)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(scrubbed.utf8)) as? [String: Any])
        #expect(object["url"] as? String == "http://h/x?s=<redacted>")
        #expect(object["body"] as? String == #"{"s":"<redacted>"}"#)
        #expect(object["n"] as? Int == 12)
        #expect(!scrubbed.contains("rd"))
    }

    @Test func secretHeadersByName() {
        var request = HTTPRequest(url: URL(string: "http://h/")!)
        request.secretHeaderNames.insert("X-Mine")
        for name in ["Authorization", "cookie", "Set-Cookie", "X-Api-Key", "X-Mine"] {
            #expect(redactor.isSecretHeader(name, in: request), "\(name)")
        }
        #expect(!redactor.isSecretHeader("Accept", in: request))
        #expect(!redactor.isSecretHeader("X-Mine", in: nil))
    }

    @Test func overlappingSecretsAreReplacedWhole() {
        let nested = Redactor(secrets: ["token", "token-extended"])
        #expect(nested.scrub("a token-extended b token") == "a <redacted> b <redacted>")
    }

    @Test("a learning redactor redacts what it learns, in every copy; a plain one ignores it")
    func learnedSecrets() {
        let learning = Redactor(secrets: ["known-secret"]).learning()
        let copy = learning  // the log's and the terminal's copies share what is learned
        #expect(copy.scrub("tok-12345") == "tok-12345")
        learning.learn("tok-12345")
        #expect(copy.scrub("a tok-12345 and known-secret") == "a <redacted> and <redacted>")
        #expect(
            String(
                decoding: copy.scrubJSON(Array(#"{"u":"/x?t=tok%2D12345"}"#.utf8)), as: UTF8.self)
                == #"{"u":"/x?t=<redacted>"}"#, "percent-encoded forms too")
        let plain = Redactor(secrets: [])
        plain.learn("tok-12345")
        #expect(plain.scrub("tok-12345") == "tok-12345")
    }
}

/// A secret inside base64 text, at each of the three alignments and in both alphabets: what
/// is left beside the placeholder holds no more than the bits of the bytes around it and a
/// few of the secret's edges.
@Suite("Redactor: base64")
struct RedactorBase64Tests {
    static let secret = "tok-1f9a+/?x~Z"

    @Test(arguments: 0..<3, 0..<3)
    func aSecretInsideBase64IsRedacted(before: Int, after: Int) {
        let redactor = Redactor(secrets: [Self.secret])
        let text =
            String(repeating: "u", count: before) + Self.secret
            + String(repeating: "v", count: after)
        let bytes = Data(text.utf8)
        let standard = bytes.base64EncodedString()
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        for encoded in [standard, urlSafe] {
            let scrubbed = redactor.scrub("Location: /cb?state=\(encoded)&n=1")
            let parts = scrubbed.components(separatedBy: "<redacted>")
            #expect(parts.count == 2, "\(encoded) → \(scrubbed)")
            guard parts.count == 2 else { continue }
            let left = parts[0].dropFirst("Location: /cb?state=".count)
            let right = parts[1].dropLast("&n=1".count)
            // Up to two bytes around it take three characters, and padding two more.
            #expect(left.count <= 3 && right.count <= 6, "\(encoded) → \(scrubbed)")
        }
    }

    @Test func otherBase64TextAndShortSecretsAreLeftAsTheyAre() {
        let redactor = Redactor(secrets: [Self.secret, "hunt5"])
        let other = Data("an image's bytes, or any other text at all".utf8).base64EncodedString()
        #expect(redactor.scrub(other) == other)
        // Under six bytes a secret has no base64 forms: a few characters match by chance.
        let short = Data("hunt5".utf8).base64EncodedString()
        #expect(redactor.scrub(short) == short)
        #expect(Base64Forms.of(Array("hunt5".utf8)).isEmpty)
    }
}
