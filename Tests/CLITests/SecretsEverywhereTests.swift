import CourierTestSupport
import Foundation
import Testing

/// The hardening issue's secrets test: one run with secrets from every source (the
/// environment, job auth, a captured login token, URL userinfo, an API key in a header and a
/// query), on success and failure paths, then every command that reads its log. Every byte
/// Courier wrote (logs, outputs, the conditional state, reports in every format, replay plans
/// and curl commands, dry-run plans, stdout, stderr) is searched for every secret in every
/// encoding.
@Suite("secrets in every byte")
struct SecretsEverywhereTests {
    /// The forms a secret could leak in.
    static func forms(of secret: String) -> [String] {
        var forms = [
            secret, Data(secret.utf8).base64EncodedString(),
            secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret,
        ]
        if let json = try? JSONEncoder().encode(secret),
            let text = String(data: json, encoding: .utf8)
        {
            forms.append(String(text.dropFirst().dropLast()))
        }
        return forms
    }

    @Test(
        "no secret in any byte, in any encoding, on either backend",
        arguments: ["curl", "urlsession"])
    func everywhere(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("everywhere")
        let apiKey = "key-\(UUID().uuidString)"
        let userPassword = "pw-\(UUID().uuidString)"
        let origin = space.server.baseURL.absoluteString.replacingOccurrences(
            of: "http://", with: "")
        try space.writeJob(
            tasks: CaptureTests.syncJob(key: key, total: 4, perPage: 2) + #"""
                ,
                {"id": "userinfo", "url": "http://alice:\#(userPassword)@\#(origin)/echo?key=\#(key)"},
                {"id": "apikey", "path": "/status/200", "query": {"key": "\#(key)", "api_key": "${env:API_KEY}"},
                 "headers": {"X-Api-Key": "${env:API_KEY}"}, "save": "apikey.json"},
                {"id": "denied", "path": "/sync/users/1", "query": {"key": "\#(key)"},
                 "auth": {"bearer": "${env:API_KEY}"}},
                {"id": "broken", "url": "http://127.0.0.1:\#(unusedLoopbackPort())/?api_key=${env:API_KEY}",
                 "headers": {"X-Api-Key": "${env:API_KEY}"}}
                """#,
            extra: #""retry": {"maxAttempts": 1},"#)
        let environment = CaptureTests.environment.merging(["API_KEY": apiKey]) { $1 }
        // Where each byte came from, so that a leak names its place. (Saved outputs are the
        // server's bytes, kept exactly: so no task here saves a body that echoes a secret.)
        var outputs: [(String, String)] = []
        let run = try await space.run(backend: backend, environment: environment)
        outputs.append(("run", run.stdout + run.stderr))
        #expect(run.status == 1, "denied and broken fail: \(run.stderr)")
        // The secrets did reach the server: the test would prove nothing otherwise.
        let hits = try await ServerHits.of(key, on: space.server).requests
        let token = "tok-\(key)-s3cr3t"
        #expect(hits.contains { $0.header("Authorization") == "Bearer \(token)" })
        #expect(hits.contains { $0.header("X-Api-Key") == apiKey })
        #expect(
            hits.contains {
                $0.header("Authorization")
                    == "Basic " + Data("alice:\(userPassword)".utf8).base64EncodedString()
            })

        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).first { $0.hasSuffix(".jsonl") })
        let logPath = space.logs.appendingPathComponent("e2e/\(log)").path
        let commands: [[String]] = [
            ["report", logPath],
            ["report", "--json", logPath],
            ["report", logPath, "--html", "report.html", "--junit", "junit.xml"],
            ["replay", logPath, "--dry-run"],
            ["replay", logPath, "--dry-run", "--format", "curl"],
            ["replay", logPath, "--job", "job.json", "--dry-run", "--format", "curl"],
            ["run", "job.json", "--dry-run"],
            ["validate", "job.json"],
        ]
        for command in commands {
            let result = try await CourierBinary.run(
                command, environment: environment, directory: space.folder)
            #expect(result.status != -1, "\(command) finished")
            outputs.append((command.joined(separator: " "), result.stdout + result.stderr))
        }
        var places = outputs.map { ($0.0, Data($0.1.utf8)) }
        let files = FileManager.default.enumerator(
            at: space.folder, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            if url.lastPathComponent != "job.json",
                let data = FileManager.default.contents(atPath: url.path)
            {
                places.append((url.lastPathComponent, data))
            }
        }
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent("report.html").path))
        let secrets = [
            apiKey, userPassword, token, "hunter22",
            Data("alice:\(userPassword)".utf8).base64EncodedString(),
        ]
        for secret in secrets {
            for form in Self.forms(of: secret) {
                for (place, data) in places where data.range(of: Data(form.utf8)) != nil {
                    Issue.record("\(backend): \"\(form)\" leaked in \(place)")
                }
            }
        }
    }
}
