import Courier
import CourierTesting
import Foundation
import Testing

/// What `events` and `lines` send and which failures reconnect, over the stub transport.
@Suite struct EventStreamClientTests {
    static let url = URL(string: "https://x.test/feed")!
    static let eventStream: HTTPHeaders = ["Content-Type": "text/event-stream"]

    @Test func acceptIsAddedOnlyWhenTheCallerSetNone() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/feed", headers: Self.eventStream, body: Data("data: a\n\n".utf8))
        for try await _ in stub.events(HTTPRequest(url: Self.url)) {}
        #expect(stub.lastRequest?.headers["Accept"] == "text/event-stream")
        let own = HTTPRequest(url: Self.url, headers: ["Accept": "text/event-stream; q=1"])
        for try await _ in stub.events(own) {}
        #expect(stub.lastRequest?.headers.values(for: "Accept") == ["text/event-stream; q=1"])
    }

    @Test func aTimeoutReconnectsAndATLSFailureDoesNot() async throws {
        let stub = StubHTTPClient()
        stub.route(.get, "/feed") { request in
            switch request.headers["Last-Event-ID"] {
            case nil where stub.requests.count == 1:
                throw HTTPError(.timeout, "stubbed timeout")
            case nil:
                return HTTPResponse(
                    status: 200, headers: Self.eventStream, body: Data("id: 1\ndata: a\n\n".utf8),
                    url: request.url)
            default:
                return HTTPResponse(status: 204, url: request.url)
            }
        }
        let events = stub.events(
            HTTPRequest(url: Self.url), reconnect: .upTo(3, delay: .milliseconds(1)))
        var ids: [String?] = []
        for try await event in events where ids.count < 10 { ids.append(event.id) }
        #expect(ids == ["1"])
        #expect(stub.requests.map { $0.headers["Last-Event-ID"] } == [nil, nil, "1"])

        stub.fail(.get, "/feed", with: .tls)
        await #expect {
            for try await _ in stub.events(
                HTTPRequest(url: Self.url), reconnect: .upTo(3, delay: .milliseconds(1)))
            {}
        } throws: { ($0 as? HTTPError)?.kind == .tls }
        #expect(stub.requests.count == 4, "one TLS failure, never retried")
    }

    @Test func reconnectionsInARowWithoutAnEventAreLimited() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/feed", headers: Self.eventStream, body: Data(": nothing\n\n".utf8))
        let events = stub.events(
            HTTPRequest(url: Self.url), reconnect: .upTo(2, delay: .milliseconds(1)))
        for try await _ in events {}
        #expect(stub.requests.count == 3)
    }

    @Test func theAPIClientAppliesMapErrorToARefusedStream() async throws {
        struct Problem: Error { let body: String }
        struct Feed: APIRequest {
            typealias Response = Data
            var path: String { "/feed" }
        }
        let stub = StubHTTPClient()
        stub.respond(.get, "/feed", status: 429, body: Data("slow down".utf8))
        var configuration = APIConfiguration(baseURL: URL(string: "https://x.test")!)
        configuration.mapError = { Problem(body: String(decoding: $0.body, as: UTF8.self)) }
        let client = DefaultAPIClient(httpClient: stub, configuration: configuration)
        await #expect {
            for try await _ in client.events(for: Feed()) {}
        } throws: { ($0 as? Problem)?.body == "slow down" }
        await #expect {
            for try await _ in client.lines(of: Int.self, for: Feed()) {}
        } throws: { ($0 as? Problem)?.body == "slow down" }
    }
}
