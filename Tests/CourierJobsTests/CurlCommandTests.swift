import Courier
import Foundation
import Testing

@testable import CourierJobs

/// `replay --format curl`'s commands: secrets nobody exported still become variables.
@Suite("CurlCommand")
struct CurlCommandTests {
    static let url = URL(string: "http://127.0.0.1:9/x?n=1")!

    @Test("a Basic header given by --header becomes -u with a named variable for the password")
    func basicFromHeaderValue() {
        let value = "Basic " + Data("bob:s3cret pass".utf8).base64EncodedString()
        let request = HTTPRequest(url: Self.url, headers: ["Authorization": value])
        let formatter = CurlCommand(secrets: [value], environment: [:], requests: [request])
        let command = formatter.command(for: request)
        // The whole header's value is a secret too, but unused: the password is the first
        // variable, not the second (trial DDD read `_2` with no `_1`).
        #expect(command.contains(#"-u "bob:${COURIER_SECRET_1}""#), "\(command)")
        #expect(!command.contains("Authorization") && !command.contains("s3cret"))
        #expect(formatter.notes.contains { $0.contains("COURIER_SECRET_1: the password of bob") })
        #expect(!formatter.notes.contains { $0.contains("COURIER_SECRET_2") }, "unused: not named")
        // Set but empty, it would go as an empty password: the script stops first.
        #expect(
            formatter.notes.contains(
                #": "${COURIER_SECRET_1:?export COURIER_SECRET_1 first (see above)}""#))
    }

    @Test("a secret header's value and secret bytes in a binary body become variables")
    func secretHeaderAndBinaryBody() {
        var body = Data([0, 1, 2])
        body += Data("key-1234".utf8)
        body += Data([0xFF])
        var request = HTTPRequest(
            url: Self.url, method: .post, headers: ["X-Api-Key": "literal-key"], body: body)
        request.secretHeaderNames.insert("x-api-key")
        let formatter = CurlCommand(
            secrets: ["key-1234"], environment: ["API_KEY": "key-1234"], requests: [request])
        let command = formatter.command(for: request)
        #expect(command.contains(#"-H "X-Api-Key: ${COURIER_SECRET_1}""#), "\(command)")
        #expect(command.contains(#"printf %s "${API_KEY}""#), "\(command)")
        #expect(command.hasSuffix("--data-binary @-"))
        // curl would add a form Content-Type the run never sent.
        #expect(command.contains(#"-H "Content-Type:" --data-binary"#), "\(command)")
        #expect(!command.contains("literal-key") && !command.contains("key-1234"))
    }

    @Test("a secret no one reference spells is <redacted>, with a line that says so, never in part")
    func overlappingSecretsAreRedacted() {
        // Two secrets that overlap in the URL: no reference covers the whole stretch.
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/abcdefghi?n=1")!)
        let formatter = CurlCommand(secrets: ["abcdef", "defghi"], environment: [:])
        let command = formatter.command(for: request)
        #expect(command.contains(#""http://127.0.0.1:9/<redacted>?n=1""#), "\(command)")
        #expect(command.hasPrefix("# a secret stands in this request"), "\(command)")
        #expect(!command.contains("abc") && !command.contains("ghi"), "\(command)")
    }

    @Test("a secret shorter than four bytes is not searched for: no other word changes")
    func shortSecretLeavesOtherWordsAlone() {
        let value = "Basic " + Data("u:r".utf8).base64EncodedString()
        let request = HTTPRequest(
            url: URL(string: "http://127.0.0.1:9/r?user=r")!,
            headers: ["Authorization": value, "User-Agent": "courier/0.1.0"])
        let formatter = CurlCommand(secrets: ["r"], environment: ["PW": "r"], requests: [request])
        let command = formatter.command(for: request)
        // Too short to be named after the variable that holds it: courier's own variable.
        #expect(command.contains(#"-u "u:${COURIER_SECRET_1}""#), "\(command)")
        #expect(command.contains(#"-H "User-Agent: courier/0.1.0""#), "\(command)")
        #expect(command.contains(#""http://127.0.0.1:9/r?user=r""#), "\(command)")
    }

    @Test("a secret two variables hold is not named after either: that would tell its value")
    func ambiguousVariableIsNotNamed() {
        let value = "Basic " + Data("u:/root".utf8).base64EncodedString()
        let request = HTTPRequest(url: Self.url, headers: ["Authorization": value])
        let formatter = CurlCommand(
            secrets: ["/root"], environment: ["HOME": "/root", "PW": "/root"], requests: [request])
        let command = formatter.command(for: request)
        #expect(command.contains(#"-u "u:${COURIER_SECRET_1}""#), "\(command)")
        #expect(!command.contains("HOME") && !command.contains("${PW}"), "\(command)")
    }

    @Test("a secret encoded otherwise than a variable's function writes it is <redacted>")
    func inexactEncodingIsRedacted() {
        // A path that escapes `;` but leaves `?` raw: it decodes to the secret, but
        // courier_urlencode would send %3F: other bytes.
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/s/ab%3Bcd?efgh")!)
        let formatter = CurlCommand(secrets: ["ab;cd?efgh"], environment: ["T": "ab;cd?efgh"])
        let command = formatter.command(for: request)
        #expect(command.contains(#""http://127.0.0.1:9/s/<redacted>""#), "\(command)")
        #expect(!command.contains("courier_urlencode"), "\(command)")
    }
}
