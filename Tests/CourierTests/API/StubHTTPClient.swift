import Courier
import Foundation

/// Answers every request with a canned response and remembers what it was sent: for unit
/// tests of the API layer's logic (URL building, headers, validation, decoding) only.
final class StubHTTPClient: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [HTTPRequest] = []
    let status: Int
    let body: Data
    let headers: HTTPHeaders

    init(status: Int = 200, body: String = "{}", headers: HTTPHeaders = [:]) {
        self.status = status
        self.body = Data(body.utf8)
        self.headers = headers
    }

    var lastRequest: HTTPRequest? { lock.withLock { sent.last } }

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { sent.append(request) }
        return HTTPResponse(status: status, headers: headers, body: body, url: request.url)
    }
}
