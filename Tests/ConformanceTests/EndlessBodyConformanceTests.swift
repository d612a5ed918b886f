import Courier
import CourierTestSupport
import Foundation
import Testing

/// A server that never stops sending (`/endless-fast`: 64 KiB chunks as fast as they are taken)
/// is ended from outside the transfer on both transports: by the deadline for a body going to a
/// file (which has no cap), by the cap for one held in memory. FoundationNetworking kept
/// receiving for 5 to 74 s after its task was cancelled; the caller must not wait for that,
/// and nothing may reach the file after the caller has its error.
///
/// Serialized, on a fixture server of their own: one flood at a time, away from other tests.
@Suite("Endless bodies", .serialized)
struct EndlessBodyConformanceTests {
    /// One test's flood on the flood fixture, and the call that ends it. FoundationNetworking
    /// goes on reading a body its caller gave up on, on the one queue every request of the
    /// process needs, until the server stops: the next test's head then waited for the last
    /// test's flood to run out (24 to 95 s, with floods of 30 to 150 s). Each test ends its
    /// flood once it has what it came for, so the draining ends then.
    struct Flood {
        let server: FixtureServer
        let id = UUID().uuidString

        /// `/endless-fast` for up to `seconds`, until ``stop()``.
        func url(seconds: Int, gzipped: Bool = false) -> URL {
            server.url(
                "/endless-fast?seconds=\(seconds)&id=\(id)" + (gzipped ? "&encoding=gzip" : ""))
        }

        /// Ends the flood, through curl: URLSession's queue may be the one still draining it.
        func stop() async {
            _ = try? await TransportKind.curl.makeClient().perform(
                HTTPRequest(url: server.url("/endless-stop?id=\(id)"), timeout: 30))
        }
    }

    /// Runs `body` with a flood of its own, and ends the flood after it, thrown or not.
    static func withFlood(_ body: (Flood) async throws -> Void) async throws {
        let flood = Flood(server: try TestServers.floodFixture())
        do {
            try await body(flood)
        } catch {
            await flood.stop()
            throw error
        }
        await flood.stop()
    }

    static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? -1
    }

    @Test(
        "an endless body going to a file ends at the deadline, and the file stops growing then",
        .timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func endlessBodyToFile(transport: TransportKind) async throws {
        try await Self.withFlood { flood in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-endless-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            // 30 s of flood, endless to a 2 s deadline; what FoundationNetworking drains after the
            // caller has its error (at 150 % CPU) ends when the test stops the flood.
            var request = HTTPRequest(url: flood.url(seconds: 30), timeout: 2)
            request.bodyDestination = .file(file)
            let client = transport.makeClient()
            // The body goes on for 60 s: a timeout, not a response, proves the deadline ended it.
            let error = try await #require(throws: HTTPError.self) {
                try await client.perform(request)
            }
            // Once the caller has its error, the file must not grow: sampled twice, a second
            // apart (a window to see growth in, not a synchronisation: nothing may be written in
            // it, however slow the machine). Sampled at fixed times instead, a loaded machine
            // fired the deadline late and the file was rightly still growing.
            let first = Self.fileSize(file)
            try await Task.sleep(for: .seconds(1))
            let second = Self.fileSize(file)
            #expect(error.kind == .timeout, "\(error)")
            #expect(first > 0, "the body was being written")
            #expect(
                first == second, "the file grew after the deadline: \(first) then \(second) bytes")
        }
    }

    @Test(
        "an endless body held in memory ends at the cap, and the client goes on working",
        // Hang guards only: the pair took 77 s in one CI run's hostile pass (the other suites'
        // floods held both cores), and a 50 s deadline would then have decided it.
        .timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func endlessBodyInMemory(transport: TransportKind) async throws {
        try await Self.withFlood { flood in
            let client = transport.makeClient(maxResponseBytes: 4 << 20)
            // The kind says the cap ended it, not the deadline (240 s, a hang guard).
            let error = try await #require(throws: HTTPError.self) {
                // 30 s of flood: far more than the 4 MiB cap, and a bound on the drain after it.
                try await client.perform(
                    HTTPRequest(url: flood.url(seconds: 30), timeout: 240))
            }
            #expect(error.kind == .bodyTooLarge, "\(error)")
            // Stopped before the next request: on URLSession that request waits for the
            // capped one's drain, which ends only with the flood (once, the flood's 30 s).
            await flood.stop()
            let next = try await client.perform(HTTPRequest(url: flood.server.url("/bytes?n=1000")))
            #expect(next.body.count == 1000)
        }
    }
}

extension EndlessBodyConformanceTests {
    /// A streaming reader that stops reading: curl pauses the transfer at the buffer limit and
    /// the deadline ends it; URLSession cannot pause, keeps taking chunks up to 64 times the
    /// buffer limit and is ended there, unless the deadline came first. Either way the reader's
    /// next read fails instead of waiting for ever.
    @Test(
        "a streamed endless body whose reader stops reading ends at the deadline",
        .timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func stalledReader(transport: TransportKind) async throws {
        try await Self.withFlood { flood in
            let client = transport.makeClient()
            // Without the deadline, curl's paused transfer would wait for ever (the suite's time
            // limit ends it). The 10 s deadline covers the head too: on a machine busy with this
            // pass's other floods (FoundationNetworking reads a cancelled task's flood on for a
            // while) the head can be late, so the request is made again when it did not come, at
            // most 5 times.
            var opened: HTTPStreamedResponse?
            for _ in 0..<5 where opened == nil {
                do {
                    opened = try await client.stream(
                        HTTPRequest(url: flood.url(seconds: 100), timeout: 10),
                        bufferLimit: 1 << 20)
                } catch let error as HTTPError where error.kind == .timeout {
                    continue
                }
            }
            let response = try #require(opened, "no head in 10 s, 5 times over")
            // The event, not a time: the transfer ends while the reader reads nothing (bounded by
            // count: 2400 looks, 100 ms apart, a hang guard).
            for _ in 0..<2400 where !response.body.transferEnded {
                try await Task.sleep(for: .milliseconds(100))
            }
            let error = try await #require(throws: HTTPError.self) {
                // Bounded by bytes: what waited is at most 64 MiB.
                var iterator = response.body.makeAsyncIterator()
                var bytes = 0
                while bytes < 1 << 36, let chunk = try await iterator.next() {
                    bytes += chunk.count
                }
            }
            let expected: [HTTPError.Kind] =
                transport == .curl ? [.timeout] : [.timeout, .bodyTooLarge]
            #expect(expected.contains(error.kind), "\(error)")
        }
    }

    /// Without a deadline to end it, a reader that stops reading a body that cannot be paused
    /// (any body on URLSession; a compressed one on curl, whose decoded bytes cannot be handed
    /// back) ends the transfer at the backlog ceiling, 64 times the buffer limit, with an error
    /// that says so, after the chunks that waited. curl pauses a plain body instead, for as
    /// long as the reader waits, holding at most the buffer limit. Memory is bounded on both.
    @Test(
        "a reader that stops reading holds at most the buffer limit, or 64 times it where it cannot pause",
        // A hang guard only: 16 s here, but 93 s in one CI run of the hostile pass, where the
        // other suites' floods and FoundationNetworking's draining of them held both cores.
        .timeLimit(.minutes(5)),
        arguments: TransportKind.allCases, [false, true])
    func stalledReaderMemory(transport: TransportKind, gzipped: Bool) async throws {
        try await Self.withFlood { flood in
            let client = transport.makeClient()
            // The flood lasts 15 s: long enough for every case, and FoundationNetworking, which
            // goes on reading a cancelled task's body, is done with it soon after.
            let limit = 64 << 10
            let response = try await client.stream(
                HTTPRequest(url: flood.url(seconds: 15, gzipped: gzipped), timeout: 60),
                bufferLimit: limit)
            var iterator = response.body.makeAsyncIterator()
            var bytes = try #require(try await iterator.next()).count
            if transport == .urlSession || gzipped {
                // An event to wait for, not a time: the transfer ends at the ceiling; the reader
                // then gets the chunks that waited and the error. Bounded by count (a hang guard,
                // 4 minutes: a starved flood can take more than one to fill the ceiling).
                for _ in 0..<2400 where !response.body.transferEnded {
                    try await Task.sleep(for: .milliseconds(100))
                }
                let error = try await #require(throws: HTTPError.self) {
                    while let chunk = try await iterator.next() { bytes += chunk.count }
                }
                #expect(error.kind == .bodyTooLarge, "\(error)")
                #expect(error.message.contains("\(64 * limit) bytes behind"), "\(error)")
            } else {
                // curl's transfer stays paused, however long the reader waits; it goes on once the
                // reader reads again (a bounded count of chunks).
                try await Task.sleep(for: .seconds(1))
                #expect(!response.body.transferEnded, "curl paused, not ended")
                for _ in 0..<100 { bytes += try #require(try await iterator.next()).count }
            }
            let peak = response.body.peakBufferedBytes
            #expect(peak <= 64 * limit, "\(peak) bytes waited")
            #expect(bytes > 0)
        }
    }

    @Test(
        // Last in the suite: FoundationNetworking drains the flood after the cancel, at 150 %
        // CPU, until the test stops it. Its 2-minute limit is what catches a caller that waits
        // for the 150 s flood to drain.
        "cancelling a request taking an endless body returns at once", .timeLimit(.minutes(2)),
        arguments: TransportKind.allCases)
    func cancelEndlessBody(transport: TransportKind) async throws {
        try await Self.withFlood { flood in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-endless-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            // A flood of 150 s and a deadline beyond it: a caller that waited for the
            // transport to drain the body (FoundationNetworking went on for 5 to 74 s after its
            // cancel) or for the deadline would run into the suite's time limit, a hang guard.
            var request = HTTPRequest(url: flood.url(seconds: 150), timeout: 900)
            request.bodyDestination = .file(file)
            let client = transport.makeClient()
            let transfer = Task { try await client.perform(request) }
            // Bounded by count and time: at most 100 looks, 50 ms apart, for the first bytes.
            for _ in 0..<100 where Self.fileSize(file) <= 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
            transfer.cancel()
            let error = try await #require(throws: HTTPError.self) { try await transfer.value }
            #expect(error.kind == .cancelled, "\(error)")
            let size = Self.fileSize(file)
            try await Task.sleep(for: .seconds(1))
            #expect(Self.fileSize(file) == size, "the file grew after the cancel")
        }
    }
}
