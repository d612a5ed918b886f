import Foundation
import Testing

@testable import Courier

/// What counts as this machine's loopback, where a secret may go in plain http: a client
/// secret once went to `http://127.attacker.example` because its host started with `127.`.
@Suite("Origin")
struct OriginTests {
    @Test(
        "loopback: localhost, IPv4 literals in 127.0.0.0/8, ::1",
        arguments: [
            "http://localhost/t", "http://LOCALHOST:8080/t", "http://127.0.0.1/t",
            "http://127.255.3.4:9/t", "http://[::1]:8080/t", "http://[0:0:0:0:0:0:0:1]/t",
        ])
    func loopback(text: String) throws {
        let url = try #require(Origin.httpURL(text))
        #expect(Origin(url)?.isLoopback == true, "\(text)")
    }

    @Test(
        "not loopback: names that look like it, other addresses",
        arguments: [
            "http://127.attacker.example/t", "http://127.0.0.1.nip.io/t",
            "http://localhost.example/t",
            "http://128.0.0.1/t", "http://10.0.0.1/t", "http://[::2]/t", "http://[::ffff:7f00:1]/t",
            "http://0x7f000001/t", "http://api.example.com/t",
        ])
    func notLoopback(text: String) throws {
        let url = try #require(Origin.httpURL(text))
        #expect(Origin(url)?.isLoopback == false, "\(text)")
    }

    @Test("an absolute http(s) URL with a host, and nothing else")
    func httpURL() {
        #expect(Origin.httpURL("https://api.example.com/v1?q=1") != nil)
        #expect(Origin.httpURL("HTTP://api.example.com") != nil)
        for text in ["/relative", "ftp://host/x", "https://", "mailto:a@b", "not a url", ""] {
            #expect(Origin.httpURL(text) == nil, "\(text)")
        }
    }
}
