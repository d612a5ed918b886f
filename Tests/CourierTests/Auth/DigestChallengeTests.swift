@testable import Courier
import Foundation
import Testing

/// Digest authentication's rules, on RFC 7616's own example and RFC 1321's MD5 vectors.
@Suite("Digest authentication: the rules")
struct DigestChallengeTests {
    @Test("MD5 gives RFC 1321's test vectors")
    func md5() {
        #expect(MD5.hex(of: Array("".utf8)) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex(of: Array("abc".utf8)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(
            MD5.hex(of: Array(String(repeating: "1234567890", count: 8).utf8))
                == "57edf4a22be3c955ac49da2e2107b67a")
    }

    static let challengeField =
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, "#
        + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "#
        + #"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS", "#
        + #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, "#
        + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "#
        + #"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#

    @Test("RFC 7616 §3.9.1: SHA-256 is chosen, and both responses match the RFC's")
    func rfcExample() throws {
        let headers: HTTPHeaders = ["WWW-Authenticate": Self.challengeField]
        let best = try #require(DigestChallenge.best(in: headers))
        #expect(best.algorithm == .sha256)
        #expect(best.qopAuth)
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        let sha = best.authorization(
            user: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
            count: 1, cnonce: cnonce)
        #expect(
            sha.contains(
                #"response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1""#))
        #expect(sha.contains("nc=00000001"))
        #expect(sha.contains(#"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#))
        let md5 = try #require(
            DigestChallenge.challenges(in: Self.challengeField).first { $0.algorithm == .md5 })
        let answer = md5.authorization(
            user: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
            count: 1, cnonce: cnonce)
        #expect(answer.contains(#"response="8ca523f5e9506fed4657c9700eebdbec""#))
    }

    @Test("challenges this client cannot answer are passed over")
    func unanswerable() {
        #expect(DigestChallenge.best(in: ["WWW-Authenticate": #"Basic realm="x""#]) == nil)
        #expect(
            DigestChallenge.best(in: [
                "WWW-Authenticate": #"Digest realm="x", nonce="n", qop="auth-int""#
            ]) == nil)
        #expect(
            DigestChallenge.best(in: [
                "WWW-Authenticate": #"Digest realm="x", nonce="n", algorithm=SHA-512-256"#
            ])
                == nil)
        let mixed = DigestChallenge.best(in: [
            "WWW-Authenticate": #"Basic realm="b", Digest realm="d", nonce="n", stale=TRUE"#
        ])
        #expect(mixed?.realm == "d")
        #expect(mixed?.stale == true)
        #expect(mixed?.qopAuth == false, "RFC 2069 form")
    }
}
