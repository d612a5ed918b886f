import Courier
import CourierTestSupport
import Foundation
import Testing

/// `HTTPRequest.cURLDescription()`: secrets redacted by default, and the revealed form, run by
/// the real curl, sends what the transports send.
@Suite("cURL descriptions")
struct CurlDescriptionTests {
    @Test func secretsAreRedactedByDefault() {
        var request = HTTPRequest(
            url: URL(string: "https://bob:pw@api.test/v1/x?token=abc&n=1")!, method: .post,
            headers: ["Authorization": "Bearer t0k", "X-Note": "it's here"],
            body: Data(#"{"a":"b'c"}"#.utf8))
        request.secretQueryNames.insert("token")
        let text = request.cURLDescription()
        #expect(!text.contains("t0k") && !text.contains("pw") && !text.contains("abc"))
        #expect(text.hasPrefix("curl -X 'POST' 'https://api.test/v1/x?token=redacted&n=1'"))
        #expect(text.contains(#"-H 'Authorization: <redacted>'"#))
        #expect(text.contains(#"-H 'X-Note: it'\''s here'"#))
        #expect(text.contains(#"--data-binary '{"a":"b'\''c"}'"#))
    }

    @Test func aFileBodyIsReadByCurlItself() {
        var request = HTTPRequest(url: URL(string: "https://api.test/up")!, method: .put)
        request.streamedBody = .file(URL(fileURLWithPath: "/data/it's.bin"))
        #expect(request.cURLDescription().hasSuffix(#"--data-binary '@/data/it'\''s.bin'"#))
        request.setBody(MultipartFormData(boundary: "b"))
        #expect(request.cURLDescription().hasSuffix("# (a body streamed from 1 part, not shown)"))
    }

    @Test("the revealed form, run by curl, reaches the server as written")
    func runsInCurl() async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("curldesc")
        let request = HTTPRequest(
            url: server.url("/echo?key=\(key)&q=a%20b"), method: .put,
            headers: ["Authorization": "Bearer t0k", "Content-Type": "text/plain", "X-Q": "it's"],
            body: Data("body 'with' quotes\nand a line".utf8))
        let result = try await CourierBinary.run(
            ["-c", request.cURLDescription(revealingSecrets: true) + " -sS -o /dev/null"],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(result.stderr)")
        let hit = try #require(try await ServerHits.of(key, on: server).requests.first)
        #expect(hit.method == "PUT")
        #expect(hit.path == "/echo?key=\(key)&q=a%20b")
        #expect(hit.header("Authorization") == "Bearer t0k")
        #expect(hit.header("X-Q") == "it's")
        #expect(hit.body == "body 'with' quotes\nand a line")
    }
}
