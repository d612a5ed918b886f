import Courier
import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// Many concurrent requests with random cancellations: each ends exactly once, no request is
/// sent twice, and no handle is left behind. Bounded to 2,000 requests, and by a hang guard of
/// 900 seconds (a loaded machine's `make test` took 120 s for one request a worker).
@Suite("CurlHTTPClient under load")
struct CurlStressTests {
    enum Outcome: Sendable {
        case completed(id: Int, echoedID: Int)
        case cancelled(id: Int)
        case failed(id: Int, String)
    }

    /// With one event loop, and with three sharing the requests (and the handle and connection
    /// limits) between them.
    @Test(arguments: [1, 3])
    func twoThousandRequestsFromTwoHundredTasksWithCancellations(eventLoops: Int) async throws {
        let server = try TestServers.fixture()
        let key = FixtureServer.uniqueKey("stress")
        let client = CurlHTTPClient(
            configuration: .init(timeout: 900, maxIdleHandles: 64, eventLoops: eventLoops))
        #expect(client.statistics.eventLoops == eventLoops)
        let total = 2_000
        let workers = 200
        let deadline = ContinuousClock.now + .seconds(900)

        let outcomes = try await withThrowingTaskGroup(of: [Outcome].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var results: [Outcome] = []
                    for id in stride(from: worker, to: total, by: workers) {
                        guard ContinuousClock.now < deadline else { break }
                        results.append(
                            await Self.run(id: id, key: key, client: client, server: server))
                    }
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }

        #expect(outcomes.count == total, "every request ended, none twice")
        var completed = Set<Int>()
        for outcome in outcomes {
            switch outcome {
            case .completed(let id, let echoed):
                #expect(id == echoed, "response matched its request")
                #expect(completed.insert(id).inserted)
            case .cancelled: break
            case .failed(let id, let message): Issue.record("request \(id) failed: \(message)")
            }
        }
        let cancelledCount = outcomes.count - completed.count
        #expect(cancelledCount > 0, "some requests were cancelled")
        #expect(completed.count > total / 2)

        let hits = try await ServerHits.of(key, on: server)
        let sentIDs = hits.requests.compactMap { Int($0.path.split(separator: "id=").last ?? "") }
        #expect(Set(sentIDs).count == sentIDs.count, "no request reached the server twice")
        #expect(completed.isSubset(of: Set(sentIDs)))

        let statistics = client.statistics
        #expect(statistics.activeTransfers == 0)
        #expect(statistics.liveHandles <= 64)
        client.shutdown()
        #expect(client.statistics.liveHandles == 0)
    }

    static func run(id: Int, key: String, client: CurlHTTPClient, server: FixtureServer) async
        -> Outcome
    {
        let request = HTTPRequest(url: server.url("/echo?key=\(key)&id=\(id)"))
        let task = Task { try await client.perform(request) }
        if id % 5 == 0 {
            try? await Task.sleep(for: .microseconds(Int.random(in: 0...3_000)))
            task.cancel()
        }
        do {
            let response = try await task.value
            let query = try Echo(response).query
            return .completed(id: id, echoedID: Int(query.split(separator: "id=").last ?? "") ?? -1)
        } catch let error as HTTPError where error.kind == .cancelled {
            return .cancelled(id: id)
        } catch {
            return .failed(id: id, "\(error)")
        }
    }
}
