import CourierTestSupport
import Foundation
import Testing

/// `"http2": true` (and `--http2`) with the job's `tls`, against nginx speaking HTTP/2 over TLS
/// with a certificate the job trusts through `tls.caBundle`. Every nginx answer is
/// "<protocol> <connection number>", saved per task.
@Suite("HTTP/2 jobs")
struct HTTP2JobTests {
    /// Writes a job of `count` tasks against the HTTP/2 nginx, 20 in flight, each saving its
    /// answer; `extra` goes in the job object.
    static func writeJob(_ space: JobWorkspace, count: Int = 40, extra: String) throws {
        let base = try TestServers.nginxHTTP2()
        let certificate = try TestServers.nginxHTTP2Certificate()
        try FileManager.default.copyItem(
            at: certificate, to: space.folder.appendingPathComponent("nginx-ca.pem"))
        let text = """
            {"version": 1, "name": "h2", "baseURL": "\(base.absoluteString)", "outputDir": "out",
             "concurrency": 20, "tls": {"caBundle": "nginx-ca.pem"}, \(extra)
             "tasks": [{"id": "r{n}", "path": "/r/{n}", "save": "r/{n}.txt",
                        "foreach": {"n": {"range": [1, \(count)]}}}]}
            """
        try text.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
    }

    /// The saved answers: (protocol, connection number) per task.
    static func answers(_ space: JobWorkspace, count: Int = 40) throws -> [(String, String)] {
        try (1...count).map { n in
            let text = try String(
                contentsOf: space.folder.appendingPathComponent("out/r/\(n).txt"), encoding: .utf8)
            let words = text.split(separator: " ").map(String.init)
            return (words.first ?? "", words.last ?? "")
        }
    }

    @Test("\"http2\": true multiplexes a job's requests over one connection; without it, HTTP/1.1")
    func jobKey() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, extra: #""http2": true,"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let answers = try Self.answers(space)
        #expect(answers.allSatisfy { $0.0 == "HTTP/2.0" }, "\(answers)")
        #expect(Set(answers.map(\.1)).count == 1, "40 tasks, 20 in flight, on one connection")

        let plain = try JobWorkspace()
        defer { plain.remove() }
        try Self.writeJob(plain, extra: "")
        let second = try await plain.run(backend: "curl")
        #expect(second.status == 0, "\(second.stdout) \(second.stderr)")
        #expect(try Self.answers(plain).allSatisfy { $0.0 == "HTTP/1.1" })
    }

    @Test("--http2 does what the key does")
    func flag() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, extra: "")
        let result = try await space.run(["--http2"], backend: "curl")
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let answers = try Self.answers(space)
        #expect(answers.allSatisfy { $0.0 == "HTTP/2.0" }, "\(answers)")
        #expect(Set(answers.map(\.1)).count == 1)
    }

    @Test("the urlsession backend refuses http2 and tls before sending anything")
    func urlSessionRefuses() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try Self.writeJob(space, extra: #""http2": true,"#)
        // The job's backend: refused when the file is read, with the key's path.
        var text = try String(
            contentsOf: space.folder.appendingPathComponent("job.json"), encoding: .utf8)
        text = text.replacingOccurrences(
            of: #""http2": true,"#, with: #""http2": true, "backend": "urlsession","#)
        try text.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let validated = try await CourierBinary.run(
            ["validate", "job.json"], directory: space.folder)
        #expect(validated.status == 2)
        #expect(validated.stderr.contains("http2"), "\(validated.stderr)")
        #expect(validated.stderr.contains("tls"), "\(validated.stderr)")
        // A curl job run with --backend urlsession: refused by the run, nothing sent.
        let other = try JobWorkspace()
        defer { other.remove() }
        try Self.writeJob(other, extra: "")
        let result = try await other.run(backend: "urlsession")
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("TLS options (caBundle)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other.logs.path), "nothing logged")
        // A replay of that job's log with --backend urlsession: refused the same way.
        let logged = try await other.run(backend: "curl")
        #expect(logged.status == 0, "\(logged.stdout) \(logged.stderr)")
        let log = try #require(
            FileManager.default.enumerator(atPath: other.logs.path)?.allObjects
                .compactMap { $0 as? String }.first { $0.hasSuffix(".jsonl") })
        let replay = try await CourierBinary.run(
            [
                "replay", other.logs.appendingPathComponent(log).path, "--job", "job.json",
                "--all", "--backend", "urlsession", "--log-dir", other.logs.path,
            ], directory: other.folder)
        #expect(replay.status == 2, "\(replay.stdout) \(replay.stderr)")
        #expect(replay.stderr.contains("TLS options (caBundle)"), "\(replay.stderr)")
    }

    @Test("tls files must exist; pins must be sha256//")
    func badTLS() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/status/200"}"#,
            extra:
                #""tls": {"caBundle": "missing.pem", "pinnedPublicKeys": ["abc"], "minimumVersion": "1.1"},"#
        )
        let result = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(result.status == 2)
        #expect(result.stderr.contains("tls.caBundle"), "\(result.stderr)")
        #expect(result.stderr.contains("missing.pem"), "\(result.stderr)")
        #expect(result.stderr.contains("tls.pinnedPublicKeys"), "\(result.stderr)")
        #expect(result.stderr.contains("tls.minimumVersion"), "\(result.stderr)")
    }
}
