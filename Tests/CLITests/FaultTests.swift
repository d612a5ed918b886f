import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The fault suite: one job whose tasks each meet a different server fault, run end to end on
/// both backends. Each fault is logged with its kind, the run goes on with the other tasks,
/// and the exit code is 1. Bounded: a 3 s deadline per request, one attempt each.
@Suite("faults")
struct FaultTests {
    /// A loopback port that completes TCP handshakes (the kernel's backlog) but never says a
    /// word: a TLS handshake to it stalls.
    final class SilentListener {
        let port: Int
        private let descriptor: Int32

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.descriptor = descriptor
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && listen(descriptor, 64) == 0
                        && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard descriptor >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    /// Task id → the error kind its one attempt must end with (`nil`: it must succeed).
    static func expected(backend: String) -> [String: String?] {
        [
            "ok": nil,
            "refused": "connect",
            "reset-before-headers": "network",
            "reset-mid-body": "network",
            "short-body": "network",
            "never-answers": "timeout",
            "one-byte-a-second": "timeout",
            "endless-chunked": "timeout",
            "tls-stall": "timeout",
            "redirect-loop": "tooManyRedirects",
            "redirect-to-ftp": "invalidURL",
            "many-headers": nil,
            "huge-header": "network",
            // FoundationNetworking cannot make a String of a header value that is not UTF-8
            // and fails the transfer; curl keeps the bytes (docs/transports.md).
            "bad-utf8": backend == "curl" ? nil : "network",
        ]
    }

    @Test(
        "a POST refused at connect logs no body bytes sent", arguments: RunCommandTests.backends)
    func refusedAtConnectSentNothing(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"""
                {"id": "w", "method": "POST", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/w", "json": {"a": 1}}
                """#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "\(result.stdout)")
        let attempts = try space.attempts("w")
        #expect(!attempts.isEmpty, "\(attempts)")
        for attempt in attempts {
            #expect((attempt["error"] as? [String: Any])?["kind"] as? String == "connect")
            #expect(attempt["bytesSent"] as? Int == 0, "\(attempt)")
        }
    }

    @Test(
        "every fault is logged with its kind; the others run; exit 1",
        arguments: ["curl", "urlsession"])
    func faults(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let silent = try SilentListener()
        try space.writeJob(
            tasks: #"""
                {"id": "ok", "path": "/echo"},
                {"id": "refused", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/"},
                {"id": "reset-before-headers", "path": "/drop"},
                {"id": "reset-mid-body", "path": "/reset-mid-body"},
                {"id": "short-body", "path": "/truncated"},
                {"id": "never-answers", "path": "/slow", "query": {"ms": "20000"}, "timeout": 3},
                {"id": "one-byte-a-second", "path": "/drip", "query": {"n": "30"}, "timeout": 3},
                {"id": "endless-chunked", "path": "/endless-chunked", "timeout": 3},
                {"id": "tls-stall", "url": "https://127.0.0.1:\#(silent.port)/", "timeout": 3},
                {"id": "redirect-loop", "path": "/loop"},
                {"id": "redirect-to-ftp", "path": "/redirect", "query": {"to": "ftp://127.0.0.1/x"}},
                {"id": "many-headers", "path": "/many-headers", "query": {"n": "1000"}},
                {"id": "huge-header", "path": "/huge-header", "query": {"bytes": "1048576"}},
                {"id": "bad-utf8", "path": "/bad-utf8", "save": "bad.bin"}
                """#,
            extra: #""timeout": 300, "retry": {"maxAttempts": 1}, "concurrency": 16,"#)
        // Each fault ended on its own deadline: the kinds below say so (the slow, dripping and
        // endless ones would otherwise end as responses, the TLS stall never). Only they have
        // a short one; the others a hang guard, so that a loaded machine cannot time out a
        // task that must succeed (3 s for all once failed so at a load of 13 on 2 cores).
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "\(result.stderr)")
        let lines = try space.logLines()
        LogContract.check(lines)
        var seen: [String: String?] = [:]
        for line in lines where line["event"] as? String == "request" {
            let task = try #require(line["task"] as? String)
            #expect(seen[task] == nil, "\(task): one attempt")
            seen[task] = (line["error"] as? [String: Any])?["kind"] as? String
        }
        let expected = Self.expected(backend: backend)
        #expect(Set(seen.keys) == Set(expected.keys), "every task has its line")
        for (task, kind) in expected {
            #expect(seen[task] == kind, "\(task) on \(backend): \(String(describing: seen[task]))")
        }
        let messages = lines.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
        #expect(messages.contains { $0.contains("response headers are too large") })
        #expect(!messages.contains("Out of memory"), "curl's misleading text is replaced")
        if backend == "curl" {
            let saved = try Data(contentsOf: space.folder.appendingPathComponent("out/bad.bin"))
            #expect(saved == Data([0xFF, 0xFE]) + Data(" not utf-8 ".utf8) + Data([0xC3, 0x28]))
        }
        let end = try #require(lines.last)
        #expect(
            (end["tasks"] as? [String: Int])?["ok"] == expected.values.filter { $0 == nil }.count)
    }

    @Test(
        "a 50 MiB body against a 10 MiB cap: held in memory it fails with bodyTooLarge; saved, it streams whole; the run goes on",
        arguments: ["curl", "urlsession"])
    func bodyOverTheCap(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let size = 50 << 20
        try space.writeJob(
            tasks: #"""
                {"id": "read", "path": "/bytes", "query": {"n": "\#(size)"},
                 "expect": {"bodyContains": "never"}},
                {"id": "saved", "path": "/bytes", "query": {"n": "\#(size)", "chunked": "1"},
                 "save": "big.bin"},
                {"id": "ok", "path": "/echo"}
                """#,
            extra: #""maxBodyBytes": 10485760, "retry": {"maxAttempts": 1},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 1, "\(result.stderr)")
        let lines = try space.logLines().filter { $0["event"] as? String == "request" }
        func line(_ task: String) -> [String: Any]? {
            lines.first { $0["task"] as? String == task }
        }
        #expect((line("read")?["error"] as? [String: Any])?["kind"] as? String == "bodyTooLarge")
        #expect(line("saved")?["outcome"] as? String == "ok")
        #expect(line("ok")?["outcome"] as? String == "ok")
        // One read and one memcmp (BytePattern): no per-byte work on the cooperative pool.
        let saved = try Data(contentsOf: space.folder.appendingPathComponent("out/big.bin"))
        #expect(saved.count == size && BytePattern.matches(saved), "the saved body is whole")
    }
}
