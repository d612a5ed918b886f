import Courier
import CourierTesting
import Foundation
import Testing

/// `willSend`, `didReceive` and `mapError`: the seeds' delegate methods as closures.
@Suite("hooks")
struct HooksTests {
    struct GetThing: APIRequest {
        typealias Response = EmptyResponse
        var path: String { "/thing" }
    }

    struct Problem: Error, Decodable, Equatable {
        let error: String
    }

    @Test func willSendChangesTheRequestAndDidReceiveSeesTheOutcome() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/thing", status: 204)
        let seen = LockedCounter()
        var configuration = APIConfiguration(
            baseURL: URL(string: "https://api.test")!, apiKey: "k")
        configuration.willSend = { request in
            var signed = request
            signed.headers.replaceOrAdd("X-Signature", "sig-\(request.url.path)")
            return signed
        }
        configuration.didReceive = { request, outcome in
            if request.headers["X-Signature"] != nil, case .success(let response) = outcome {
                seen.add(response.status)
            }
        }
        let client = DefaultAPIClient(httpClient: stub, configuration: configuration)
        _ = try await client.perform(GetThing())
        #expect(stub.lastRequest?.headers["X-Signature"] == "sig-/thing")
        #expect(seen.values == [204])
    }

    @Test func aThrowingWillSendSendsNothing() async throws {
        let stub = StubHTTPClient(body: "")
        var configuration = APIConfiguration(baseURL: URL(string: "https://api.test")!, apiKey: "k")
        configuration.willSend = { _ in throw CancellationError() }
        let client = DefaultAPIClient(httpClient: stub, configuration: configuration)
        await #expect(throws: CancellationError.self) { try await client.perform(GetThing()) }
        #expect(stub.requests.isEmpty)
    }

    @Test func mapErrorTurnsAStatusIntoTheCallersError() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/thing", status: 422, json: #"{"error": "name is required"}"#)
        var configuration = APIConfiguration(baseURL: URL(string: "https://api.test")!, apiKey: "k")
        configuration.mapError = { response in
            try? JSONDecoder().decode(Problem.self, from: response.body)
        }
        let client = DefaultAPIClient(httpClient: stub, configuration: configuration)
        await #expect(throws: Problem(error: "name is required")) {
            try await client.perform(GetThing())
        }
        configuration.mapError = { _ in nil }
        let plain = DefaultAPIClient(httpClient: stub, configuration: configuration)
        await #expect(throws: APIError.self) { try await plain.perform(GetThing()) }
    }

    @Test func belowARetryLayerTheHookRunsPerAttempt() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/thing", status: 503)
        let attempts = LockedCounter()
        let hooked = HookingHTTPClient(
            wrapping: stub,
            willSend: { request in
                attempts.add(1)
                return request
            })
        let retrying = RetryingHTTPClient(
            wrapping: hooked, policy: RetryPolicy(maxAttempts: 3, initialDelay: 0),
            time: ManualTimeSource())
        let response = try await retrying.perform(
            HTTPRequest(url: URL(string: "https://api.test/thing")!))
        #expect(response.status == 503)
        #expect(attempts.values.count == 3)
    }
}

/// A thread-safe list of integers for closures that run on other tasks.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Int] = []
    var values: [Int] { lock.withLock { recorded } }
    func add(_ value: Int) { lock.withLock { recorded.append(value) } }
}
