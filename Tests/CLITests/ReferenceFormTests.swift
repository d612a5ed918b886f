import CourierTestSupport
import Foundation
import Testing

/// `${file:PATH}` (a secret read from a file, as Docker and Kubernetes mount them) and
/// `${env-public:NAME}` (an environment value that is no secret), beside `${env:NAME}`.
@Suite("reference forms")
struct ReferenceFormTests {
    @Test("${file:…} is sent, its final line break dropped, and written nowhere")
    func fileSecret() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let token = "tok-\(UUID().uuidString)"
        // Outside the workspace, whose every byte is searched below; an absolute path.
        let secrets = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: secrets) }
        let file = secrets.appendingPathComponent("token")
        try "\(token)\n".write(to: file, atomically: true, encoding: .utf8)
        let key = FixtureServer.uniqueKey("file")
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo", "query": {"key": "\#(key)"}}"#,
            extra: #""auth": {"bearer": "${file:\#(file.path)}"},"#)
        let result = try await space.run(backend: "curl")
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.requests.map { $0.header("Authorization") } == ["Bearer \(token)"])
        let written = try space.everyWrittenByte()
        #expect(written.range(of: Data(token.utf8)) == nil, "the token reached a file")
        #expect(!result.stdout.contains(token) && !result.stderr.contains(token))
    }

    @Test("${env-public:…} is logged as it is; ${env:…} stays redacted")
    func publicEnvironmentValue() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let base = space.server.baseURL.absoluteString
        let job = { (reference: String) in
            #"{"version": 1, "name": "e2e", "baseURL": "\#(reference)", "outputDir": "out", "tasks": [{"id": "a", "path": "/status/200"}]}"#
        }
        try job("${env-public:API_BASE}").write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true,
            encoding: .utf8)
        let open = try await space.run(backend: "curl", environment: ["API_BASE": base])
        #expect(open.status == 0, "\(open.stdout) \(open.stderr)")
        let logged = try space.attempts("a").compactMap { $0["url"] as? String }
        #expect(logged.allSatisfy { $0.hasPrefix(base) }, "\(logged)")

        try job("${env:API_BASE}").write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true,
            encoding: .utf8)
        let secret = try await space.run(backend: "curl", environment: ["API_BASE": base])
        #expect(secret.status == 0, "\(secret.stdout) \(secret.stderr)")
        let redacted = try space.attempts("a").compactMap { $0["url"] as? String }
        #expect(redacted.contains { !$0.hasPrefix(base) }, "\(redacted)")
    }

    @Test("a missing file or variable is an error at its JSON path; nothing is sent")
    func missingReferences() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "a", "path": "/status/200", "headers": {"X-Tenant": "${env-public:NO_SUCH_TENANT}"}}"#,
            extra: #""auth": {"bearer": "${file:secrets/missing.txt}"},"#)
        let result = try await CourierBinary.run(["validate", "job.json"], directory: space.folder)
        #expect(result.status == 2)
        #expect(result.stderr.contains("auth.bearer"), "\(result.stderr)")
        #expect(result.stderr.contains("secrets/missing.txt"), "\(result.stderr)")
        #expect(result.stderr.contains("NO_SUCH_TENANT"), "\(result.stderr)")
    }
}
