import CourierTestSupport
import Foundation
import Testing

/// `courier run --metrics-push`: the figures pushed to a real Prometheus Pushgateway (Debian's,
/// which parses a push strictly and refuses a text that breaks the format), read back from it
/// and compared with the metrics file of the same run, sample for sample; the last success kept
/// through a failed run; one group per shard; a gateway that fails changes no exit code and
/// never sees its URL written.
@Suite("metrics pushed to a Pushgateway")
struct MetricsPushTests {
    /// The gateway's samples of `job`, all groups, parsed by the strict reader.
    static func gatewaySamples(_ gateway: URL, job: String) throws -> [PrometheusExposition.Sample]
    {
        let (status, body) = try LoopbackHTTP.exchange(
            "GET", gateway.appendingPathComponent("metrics"))
        #expect(status == 200)
        let parsed = try PrometheusExposition.parse(String(decoding: body, as: UTF8.self))
        return parsed.order.flatMap { parsed[$0]?.samples ?? [] }.filter {
            $0.name.hasPrefix("courier_") && $0.labels["job"] == job
        }
    }

    /// Every sample of the file is at the gateway with the same value (the gateway adds its
    /// `instance` label), and the gateway holds no other of the job's shard.
    static func expectSame(
        file: URL, gateway: URL, job: String, shard: String = "whole"
    ) throws {
        let ours = try PrometheusExposition.parse(String(contentsOf: file, encoding: .utf8))
        let mine = ours.order.flatMap { ours[$0]?.samples ?? [] }
        let theirs = try gatewaySamples(gateway, job: job).filter { $0.labels["shard"] == shard }
        #expect(mine.count > 20 && theirs.count == mine.count, "\(theirs.count) of \(mine.count)")
        for sample in mine {
            let labels = sample.labels.merging(["instance": ""]) { $1 }
            let pushed = theirs.first { $0.name == sample.name && $0.labels == labels }
            #expect(pushed?.value == sample.value, "\(sample.name) \(sample.labels)")
        }
    }

    static func value(
        _ samples: [PrometheusExposition.Sample], _ name: String, shard: String = "whole"
    ) -> Double? {
        samples.first { $0.name == name && $0.labels["shard"] == shard }?.value
    }

    @Test("the gateway holds the metrics file's figures; the last success outlives a failed run")
    func sameAsTheFile() async throws {
        let gateway = try TestServers.pushgateway()
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = "push-\(UUID().uuidString.prefix(8).lowercased())"
        let file = space.folder.appendingPathComponent("courier.prom")
        let arguments = ["--metrics-file", file.path, "--metrics-push", gateway.absoluteString]
        func run(_ tasks: String, status: Int32) async throws {
            try space.writeJob(name: job, tasks: tasks, extra: #""retry": {"maxAttempts": 1},"#)
            let result = try await space.run(arguments, backend: "curl")
            #expect(result.status == status, "\(result.stderr)")
            #expect(!result.stderr.contains("warning"), "\(result.stderr)")
            try Self.expectSame(file: file, gateway: gateway, job: job)
        }
        try await run(
            #"{"id": "a", "path": "/echo"}, {"id": "bad", "path": "/status/500"}"#, status: 1)
        #expect(
            Self.value(try Self.gatewaySamples(gateway, job: job), "courier_last_exit_code") == 1)
        try await run(#"{"id": "a", "path": "/echo"}"#, status: 0)
        let succeeded = try Self.gatewaySamples(gateway, job: job)
        let success = try #require(
            Self.value(succeeded, "courier_last_success_timestamp_seconds"))
        // A failed run pushes no success time: the gateway keeps the last one, as the file does.
        try await run(#"{"id": "bad", "path": "/status/500"}"#, status: 1)
        let failed = try Self.gatewaySamples(gateway, job: job)
        #expect(Self.value(failed, "courier_last_success_timestamp_seconds") == success)
        #expect(Self.value(failed, "courier_last_exit_code") == 1)
    }

    @Test("each shard pushes to a group of its own; @FILE holds the URL, never written")
    func shardsAndSecretURL() async throws {
        let gateway = try TestServers.pushgateway()
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = "push-\(UUID().uuidString.prefix(8).lowercased())"
        // Credentials the gateway ignores: what must never be written.
        let password = "pw-\(UUID().uuidString)"
        var withCredentials = try #require(
            URLComponents(url: gateway, resolvingAgainstBaseURL: false))
        withCredentials.user = "courier"
        withCredentials.password = password
        let secretFile = space.folder.appendingPathComponent("push-url")
        try (try #require(withCredentials.string) + "\n").write(
            to: secretFile, atomically: true, encoding: .utf8)
        try space.writeJob(
            name: job,
            tasks: #"{"id": "t{n}", "path": "/echo", "foreach": {"n": {"range": [1, 8]}}}"#)
        var outputs = ""
        for index in 0..<2 {
            let result = try await space.run(
                ["--shard", "\(index)/2", "--metrics-push", "@" + secretFile.path],
                backend: "curl")
            #expect(result.status == 0, "\(result.stderr)")
            outputs += result.stdout + result.stderr
        }
        let samples = try Self.gatewaySamples(gateway, job: job)
        let ok = ["0/2", "1/2"].map { shard in
            samples.first {
                $0.name == "courier_run_tasks" && $0.labels["shard"] == shard
                    && $0.labels["outcome"] == "ok"
            }?.value ?? -1
        }
        #expect(ok.allSatisfy { $0 > 0 } && ok.reduce(0, +) == 8, "\(ok)")
        for line in try space.logLines(job: job) {
            outputs += String(describing: line)
        }
        #expect(!outputs.contains(password) && !outputs.contains(secretFile.path + "\n"))
    }

    @Test("a gateway that refuses or is not there: one warning without its URL, the exit code kept")
    func failingGateway() async throws {
        let gateway = try TestServers.pushgateway()
        let space = try JobWorkspace()
        defer { space.remove() }
        let token = "tok\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        for target in [
            // Not a gateway's path: 404 from a real gateway.
            gateway.appendingPathComponent(token).absoluteString,
            // Nothing listens.
            "http://127.0.0.1:\(unusedLoopbackPort())/\(token)",
        ] {
            let result = try await space.run(["--metrics-push", target], backend: "curl")
            #expect(result.status == 0, "\(result.stderr)")
            let warnings =
                result.stderr.components(separatedBy: "cannot push the metrics").count - 1
            #expect(warnings == 1, "\(result.stderr)")
            #expect(!result.stderr.contains(token) && !result.stdout.contains(token))
        }
        let logged = try space.logLines().map { String(describing: $0) }.joined()
        #expect(!logged.contains(token))
    }

    @Test("a pushed tick shows the run under way, before its end")
    func ticksWhileRunning() async throws {
        let gateway = try TestServers.pushgateway()
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = "push-\(UUID().uuidString.prefix(8).lowercased())"
        let gate = FixtureServer.uniqueKey("push-gate")
        try space.writeJob(
            name: job, tasks: #"{"id": "held", "path": "/gate?name=\#(gate)", "timeout": 900}"#)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--no-progress",
                "--metrics-push", gateway.absoluteString, "--metrics-interval", "1",
            ], directory: space.folder)
        let release =
            space.server.baseURL.appendingPathComponent("toggle/on")
            .absoluteString + "?name=\(gate)"
        // The event: the gateway says the run is under way with one task planned.
        let seen = await OffPool.when({
            let samples = (try? Self.gatewaySamples(gateway, job: job)) ?? []
            return Self.value(samples, "courier_run_running") == 1
                && Self.value(samples, "courier_run_tasks_planned") == 1
        }) { _ = try? LoopbackHTTP.exchange("GET", URL(string: release)!) }
        if !seen { _ = try? LoopbackHTTP.exchange("GET", URL(string: release)!) }
        let (status, _, stderr) = await running.exit()
        #expect(seen, "the gateway never showed the run under way")
        #expect(status == 0, "\(stderr)")
        let samples = try Self.gatewaySamples(gateway, job: job)
        #expect(Self.value(samples, "courier_run_running") == 0)
        #expect(Self.value(samples, "courier_last_exit_code") == 0)
    }

    @Test("a URL that is not http(s), or an interval alone, is a usage error that shows no URL")
    func usage() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        let secret = "ftp://push.example/secret-0123456789abcdef"
        let bad = try await space.run(["--metrics-push", secret], backend: "curl")
        #expect(bad.status == 2)
        #expect(
            bad.stderr.contains("--metrics-push expects")
                && !bad.stderr.contains("0123456789abcdef"))
        let missing = try await space.run(
            ["--metrics-push", "@" + space.folder.appendingPathComponent("none").path],
            backend: "curl")
        #expect(missing.status == 2 && missing.stderr.contains("cannot read the file"))
        let alone = try await space.run(["--metrics-interval", "5"], backend: "curl")
        #expect(alone.status == 2 && alone.stderr.contains("--metrics-file or --metrics-push"))
    }
}
