import Courier
import Foundation
import Testing

@Suite struct APIErrorTests {
    let url = URL(string: "https://user:pw@api.example.com/items?id=1")!
    let response = HTTPResponse(
        status: 418, headers: ["Content-Type": "application/problem+json"],
        body: Data(#"{"title":"teapot"}"#.utf8),
        url: URL(string: "https://api.example.com/items?id=1")!)

    @Test func theMethodAndURLInitializerKeepsTheResponse() {
        let error = APIError(
            .unacceptableStatus, "status 418", request: (.get, url), response: response)
        #expect(error.response == response)
        #expect(error.status == 418)
        #expect(error.body == response.body)
        #expect(error.contentType == "application/problem+json")
        #expect(error.request?.url.absoluteString == "https://api.example.com/items?id=1")
    }

    @Test func theRequestInitializerKeepsTheResponse() {
        let error = APIError(
            .decoding, "bad body", request: HTTPRequest(url: url), response: response)
        #expect(error.response == response)
        #expect(error.request?.method == .get)
    }

    @Test func withoutAResponseThereIsNone() {
        let error = APIError(.invalidRequest, "no URL", request: (.post, url))
        #expect(error.response == nil && error.status == nil)
    }
}
