import Courier
import CourierTestSupport
import Foundation
import Testing

/// `HTTPClient.stream(_:)`: the head as soon as it arrives, the body chunk by chunk, the same
/// bytes and errors on both transports, and a reader that falls behind holding curl back.
@Suite("Streaming bodies")
struct StreamingConformanceTests {
    static func isPattern(_ data: Data) -> Bool {
        BytePattern.matches(data)
    }

    @Test(
        "8 MiB arrive whole, in order, in several chunks",
        arguments: TransportKind.allCases, ["", "&chunked=1"])
    func wholeBody(transport: TransportKind, chunked: String) async throws {
        let server = try TestServers.fixture()
        let size = 8 << 20
        // A 1 MiB memory cap: a streamed body has none.
        let client = transport.makeClient(maxResponseBytes: 1 << 20)
        let response = try await client.stream(
            HTTPRequest(url: server.url("/bytes?n=\(size)\(chunked)")))
        #expect(response.status == 200)
        var body = Data()
        var chunks = 0
        for try await chunk in response.body {
            body.append(chunk)
            chunks += 1
        }
        #expect(body.count == size)
        #expect(Self.isPattern(body))
        #expect(chunks > 1)
    }

    @Test(
        "the head and the first chunk come before the server has finished",
        arguments: TransportKind.allCases)
    func headBeforeBody(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let name = FixtureServer.uniqueKey("gate")
        let response = try await transport.makeClient().stream(
            HTTPRequest(url: server.url("/gate?name=\(name)")))
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/plain")
        var iterator = response.body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("first".utf8))
        // Only now may the server send the rest: a client that waited for the whole body would
        // still be waiting (the gate gives up after 10 s, and the test would see "first" late).
        _ = try await ProbeClient().get(server.url("/toggle/on?name=\(name)"))
        var rest = Data()
        while let chunk = try await iterator.next() { rest.append(chunk) }
        #expect(rest == Data("last".utf8))
    }

    @Test("a slow reader pauses curl: at most the buffer limit waits in memory")
    func backPressure() async throws {
        let server = try TestServers.fixture()
        let limit = 256 << 10
        let client = TransportKind.curl.makeClient()
        // 8 MiB: 32 times the limit, and quick even under the thread sanitizer, where each
        // pause and resume costs milliseconds.
        let response = try await client.stream(
            HTTPRequest(url: server.url("/bytes?n=\(8 << 20)"), timeout: 120), bufferLimit: limit)
        var count = 0
        var first = true
        for try await chunk in response.body {
            if first {
                // Let the transfer run ahead of the reader.
                try await Task.sleep(for: .milliseconds(300))
                first = false
            }
            count += chunk.count
        }
        #expect(count == 8 << 20)
        // One chunk past the limit at most (curl hands over up to 64 KiB at a time).
        #expect(response.body.peakBufferedBytes <= limit + (64 << 10))
    }

    @Test(
        "errors: a body cut short throws after the chunks that came",
        arguments: TransportKind.allCases)
    func truncated(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let response = try await transport.makeClient().stream(
            HTTPRequest(url: server.url("/truncated")))
        await #expect(throws: HTTPError.self) { _ = try await response.body.collect() }
    }

    @Test("a refused connection throws from stream itself", arguments: TransportKind.allCases)
    func refused(transport: TransportKind) async throws {
        let port = unusedLoopbackPort()
        await #expect {
            _ = try await transport.makeClient().stream(
                HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
        } throws: { ($0 as? HTTPError)?.kind == .connect }
    }

    @Test(
        "stopping early cancels the transfer and leaves the client usable",
        arguments: TransportKind.allCases)
    func stopEarly(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let client = transport.makeClient()
        do {
            let response = try await client.stream(
                HTTPRequest(url: server.url("/bytes?n=\(64 << 20)")))
            for try await _ in response.body { break }
        }
        let after = try await client.perform(HTTPRequest(url: server.url("/echo")))
        #expect(after.status == 200)
    }
}
