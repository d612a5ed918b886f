import Courier
import Foundation
import Testing

@Suite struct SecretHeadersTests {
    @Test func headersDescriptionRedactsSecrets() {
        let headers: HTTPHeaders = [
            "Authorization": "Bearer t0k", "Cookie": "sid=c00k", "X-Api-Key": "k3y", "Accept": "*/*",
        ]
        let text = headers.description
        for secret in ["t0k", "c00k", "k3y"] { #expect(!text.contains(secret)) }
        #expect(text.contains("Accept: */*"))
        #expect(text.contains("Authorization: <redacted>"))
    }

    @Test func requestDescriptionRedactsMarkedHeadersQueryKeysAndUserinfo() {
        var request = HTTPRequest(
            url: URL(string: "http://bob:pa55@h.test/x?api_key=qk3y&page=2")!,
            headers: ["X-Custom-Token": "hdr"])
        request.secretHeaderNames.insert("X-Custom-Token")
        request.secretQueryNames.insert("api_key")
        let text = request.description
        for secret in ["pa55", "qk3y", "hdr"] { #expect(!text.contains(secret), "\(text)") }
        #expect(text.contains("page=2"))
    }

    @Test func namesInsertedAfterInitAreLowercased() {
        var request = HTTPRequest(url: URL(string: "http://h.test")!)
        request.secretHeaderNames.insert("X-Session")
        #expect(request.secretHeaderNames == ["x-session"])
        #expect(request.isSecretHeader("x-SESSION"))
    }

    @Test func transportErrorsNeverShowAQueryKey() async throws {
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/x?api_key=qk3y")!)
        request.secretQueryNames.insert("api_key")
        let error = HTTPError(.connect, "refused", url: request.displayURL)
        #expect(!error.description.contains("qk3y"))
    }
}
