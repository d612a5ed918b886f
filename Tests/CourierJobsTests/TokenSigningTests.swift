import Courier
import Foundation
import Testing

@testable import CourierJobs

/// A renewed token is put into a task's request in place of the old one, in each `auth` form.
@Suite("signing a request with a renewed token")
struct TokenSigningTests {
    let old = "tok-old"
    let new = "tok-new"

    func request(_ auth: Authentication, bindings: [String: String]) -> HTTPRequest {
        var request = HTTPRequest(url: URL(string: "https://api.example.com/items?page=2")!)
        auth.rendered(bindings).apply(to: &request)
        return request
    }

    @Test("bearer, basic and header forms replace the field; other variables stay")
    func headers() {
        let forms: [(Authentication, String, String)] = [
            (.bearer("{token}"), "Authorization", "Bearer tok-new"),
            (
                .basic(user: "{user}", password: "{token}"), "Authorization",
                "Basic " + Data("me:tok-new".utf8).base64EncodedString()
            ),
            (.header(name: "X-Api-Key", value: "key {token}"), "X-Api-Key", "key tok-new"),
        ]
        for (auth, field, expected) in forms {
            let bindings = ["token": old, "user": "me"]
            let signed = JobRunner.signed(
                request(auth, bindings: bindings), auth: auth, bindings: bindings,
                token: "token", value: new)
            #expect(signed.headers.values(for: field) == [expected], "\(auth)")
        }
    }

    @Test("a query key is replaced, not added twice; the rest of the query stays")
    func query() {
        let auth = Authentication.query(name: "api key", value: "{token}")
        let bindings = ["token": old]
        let signed = JobRunner.signed(
            request(auth, bindings: bindings), auth: auth, bindings: bindings, token: "token",
            value: new)
        #expect(
            signed.url.absoluteString == "https://api.example.com/items?page=2&api%20key=tok-new")
        #expect(signed.secretQueryNames.contains("api key"))
    }
}
