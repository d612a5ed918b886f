import Courier
@testable import CourierCurl
import CourierTestSupport
import Foundation
import Testing

/// The event loops as task executors (``CurlHTTPClient/taskExecutors``), as the job runner
/// uses them: a task that prefers a loop runs on its thread and sends through it.
@Suite("CurlHTTPClient task executors")
struct CurlTaskExecutorTests {
    @Test func tasksPreferringALoopRunOnItsThreadAndSendThroughIt() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(maxConnectionsPerHost: 8, eventLoops: 2))
        let executors = client.taskExecutors
        #expect(executors.count == 2)
        let key = FixtureServer.uniqueKey("executor")
        let requests = Task {
            try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for _ in 0..<8 {
                    group.addTask(executorPreference: executors[1]) {
                        let status = try await client.perform(
                            HTTPRequest(url: server.url("/slow?ms=600&key=\(key)"))
                        ).status
                        return (status, client.currentLoop)
                    }
                }
                return try await group.reduce(into: [(Int, Int?)]()) { $0.append($1) }
            }
        }
        let results = try await requests.value
        #expect(results.map(\.0) == Array(repeating: 200, count: 8))
        #expect(results.allSatisfy { $0.1 == 1 }, "resumed on loops \(results.map(\.1))")
        // Left to themselves, eight requests at once spread over both loops (the test of
        // spreading shows it); these all went to the loop their tasks run on.
        #expect(client.loops.map(\.statistics.completedTransfers) == [0, 8])
        // That loop's share of the connections: four of eight.
        #expect(try await server.maxConcurrency(of: key) == 4)
    }

    @Test func aTaskOnALoopGoesOnAfterTheClientShutsDown() async throws {
        let server = try TestServers.fixture()
        let client = CurlHTTPClient(configuration: .init(eventLoops: 1))
        let steps = Steps()
        // Not awaited: a task stranded on a stopped loop fails the test instead of hanging it.
        Task(executorPreference: client.taskExecutors[0]) {
            let first = try? await client.perform(HTTPRequest(url: server.url("/echo")))
            steps.add("status \(first?.status ?? 0)")
            // From the loop's own thread: it must not wait for itself.
            client.shutdown()
            do {
                _ = try await client.perform(HTTPRequest(url: server.url("/echo")))
                steps.add("answered after shutdown")
            } catch let error as HTTPError {
                steps.add("\(error.kind)")
            } catch {
                steps.add("\(error)")
            }
            // Resumed after the loop has stopped: on the global executor instead.
            try? await Task.sleep(for: .milliseconds(50))
            steps.add("resumed")
        }
        // A hang guard: the three steps take milliseconds on a quiet machine.
        let deadline = ContinuousClock.now + .seconds(300)
        while steps.all.count < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(steps.all == ["status 200", "cancelled", "resumed"])
        #expect(client.statistics.liveHandles == 0)
    }

    final class Steps: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        var all: [String] { lock.withLock { list } }
        func add(_ step: String) { lock.withLock { list.append(step) } }
    }
}
