import Courier
import CourierTesting
import Foundation
import Testing

/// `stream(_:)` over a client that ignores the destination (the stub), and the channel's rules
/// that the transports rely on.
@Suite("stream(_:)")
struct StreamTests {
    @Test func aClientThatIgnoresTheDestinationGivesTheBodyAsOneChunk() async throws {
        let stub = StubHTTPClient()
        stub.respond(.get, "/feed", status: 201, headers: ["X-A": "1"], body: Data("abc".utf8))
        let response = try await stub.stream(HTTPRequest(url: URL(string: "https://x.test/feed")!))
        #expect(response.status == 201)
        #expect(response.headers["x-a"] == "1")
        var chunks: [Data] = []
        for try await chunk in response.body { chunks.append(chunk) }
        #expect(chunks == [Data("abc".utf8)])
    }

    @Test func aFailureBeforeTheHeadThrowsFromStream() async throws {
        let stub = StubHTTPClient()
        stub.fail(.get, "/feed", with: .timeout)
        await #expect {
            _ = try await stub.stream(HTTPRequest(url: URL(string: "https://x.test/feed")!))
        } throws: { ($0 as? HTTPError)?.kind == .timeout }
    }

    @Test func theChannelRefusesPastItsLimitAndAsksForMoreOnceRead() async throws {
        let channel = BodyChunkChannel(bufferLimit: 4)
        let resumed = Counter()
        let bytes: [UInt8] = [1, 2, 3]
        func offer(_ canWait: Bool) -> BodyChunkChannel.Offer {
            bytes.withUnsafeBytes { channel.offer($0, canWait: canWait) { resumed.add() } }
        }
        channel.deliver(status: 200, headers: [:])
        #expect(offer(true) == .taken)
        #expect(offer(true) == .taken, "3 bytes wait: under the limit of 4")
        #expect(offer(true) == .full, "6 bytes wait")
        #expect(offer(false) == .taken, "a transport that cannot wait is never refused")
        #expect(try await channel.next()?.count == 3)
        #expect(resumed.value == 0, "6 bytes still wait")
        #expect(try await channel.next()?.count == 3)
        #expect(resumed.value == 1, "under the limit again: the transport is resumed once")
        channel.finish()
        #expect(try await channel.next()?.count == 3)
        #expect(try await channel.next() == nil)
        #expect(channel.deliver(status: 500, headers: [:]) == false, "one head only")
        channel.readerLeft()
        #expect(offer(false) == .readerGone)
    }

    /// A transport that cannot wait is refused once 64 times the buffer limit waits, and not
    /// before: memory stays bounded whatever the reader does. Reading makes room again.
    @Test func aTransportThatCannotWaitIsRefusedAtTheBacklogCeiling() async throws {
        let channel = BodyChunkChannel(bufferLimit: 4)
        #expect(channel.backlogCeiling == 256)
        #expect(BodyChunkChannel(bufferLimit: .max).backlogCeiling == .max)
        channel.deliver(status: 200, headers: [:])
        let chunk = [UInt8](repeating: 7, count: 100)
        func offer() -> BodyChunkChannel.Offer {
            chunk.withUnsafeBytes { channel.offer($0, canWait: false) }
        }
        #expect(offer() == .taken)
        #expect(offer() == .taken, "200 bytes wait")
        #expect(offer() == .readerTooFarBehind, "300 would pass 256")
        #expect(try await channel.next()?.count == 100)
        #expect(offer() == .taken, "room again once read")
        let error = channel.backlogError(url: URL(string: "http://u:p@127.0.0.1/x"))
        #expect(error.kind == .bodyTooLarge)
        #expect(error.message.contains("256 bytes behind"), "\(error.message)")
        #expect(error.url?.absoluteString == "http://127.0.0.1/x")
    }

    /// A transport that cannot wait (URLSession) and a reader far behind: every chunk comes,
    /// in order, through the backlog's compaction, and then the error the body ended with.
    @Test func aLongBacklogIsReadInOrderThenTheError() async throws {
        // A ceiling of 256 KiB: the 8,000 chunks of 8 bytes that wait at most stay under it.
        let channel = BodyChunkChannel(bufferLimit: 4096)
        channel.deliver(status: 200, headers: [:])
        var sent = 0
        func offer(_ count: Int) {
            for _ in 0..<count {
                withUnsafeBytes(of: sent) { #expect(channel.offer($0, canWait: false) == .taken) }
                sent += 1
            }
        }
        var read = 0
        func take(_ count: Int) async throws {
            for _ in 0..<count {
                let chunk = try #require(try await channel.next())
                #expect(chunk.withUnsafeBytes { $0.load(as: Int.self) } == read)
                read += 1
            }
        }
        offer(3000)
        try await take(2000)
        offer(5000)
        try await take(5500)
        offer(10)
        channel.finish(HTTPError(.timeout, "no complete response in time"))
        try await take(sent - read)
        await #expect(throws: HTTPError.self) { try await channel.next() }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}
