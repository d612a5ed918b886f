import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `courier run --metrics-file`: the file read back by a strict reader of the format (and by
/// the Prometheus project's Python client), its numbers checked against the run's own log,
/// the last success carried over failed runs, and the file whole whenever it is read.
@Suite("metrics file of a run")
struct MetricsRunTests {
    static let backends = ["curl", "urlsession"]

    static func read(_ file: URL) throws -> PrometheusExposition {
        try PrometheusExposition.parse(String(contentsOf: file, encoding: .utf8))
    }

    /// What the log's request lines add up to, computed here from the parsed lines.
    struct LogFigures {
        var byClass: [String: Double] = [:]
        var retries = 0.0
        var sent = 0.0
        var received = 0.0
        var durations: [Double] = []

        init(_ lines: [[String: Any]]) {
            for line in lines where line["event"] as? String == "request" {
                let status = line["status"] as? Int
                let name = status.map { "\($0 / 100)xx" } ?? "error"
                byClass[name, default: 0] += 1
                if line["outcome"] as? String == "retry" { retries += 1 }
                sent += (line["bytesSent"] as? NSNumber)?.doubleValue ?? .nan
                received += (line["bytesReceived"] as? NSNumber)?.doubleValue ?? .nan
                let timings = line["timings"] as? [String: Any]
                durations.append(((timings?["totalMs"] as? NSNumber)?.doubleValue ?? .nan) / 1000)
            }
        }
    }

    /// Every figure of the file that the log also says, compared.
    static func expectAgreement(
        _ metrics: PrometheusExposition, log lines: [[String: Any]], job: String = "e2e",
        shard: String = "whole"
    ) throws {
        let labels = ["job": job, "shard": shard]
        for family in metrics.order {
            for sample in try #require(metrics[family]).samples {
                #expect(sample.labels["job"] == job && sample.labels["shard"] == shard)
            }
        }
        let figures = LogFigures(lines)
        #expect(!figures.durations.isEmpty)
        let requests = try #require(metrics["courier_run_requests"])
        for name in ["2xx", "3xx", "4xx", "5xx", "error"] {
            #expect(
                requests.value(labels.merging(["class": name]) { $1 })
                    == figures.byClass[name] ?? 0, "\(name)")
        }
        #expect(metrics["courier_run_retries"]?.value(labels) == figures.retries)
        #expect(metrics["courier_run_sent_bytes"]?.value(labels) == figures.sent)
        #expect(metrics["courier_run_received_bytes"]?.value(labels) == figures.received)
        let histogram = try #require(metrics["courier_run_request_duration_seconds"])
        let buckets = histogram.samples.filter { $0.name == histogram.name + "_bucket" }
        #expect(buckets.count >= 10)
        for bucket in buckets {
            let bound = try #require(PrometheusExposition.number(bucket.labels["le"] ?? ""))
            let expected = figures.durations.filter { $0 <= bound }.count
            #expect(bucket.value == Double(expected), "le=\(bucket.labels["le"] ?? "")")
        }
        #expect(
            histogram.value(labels, name: histogram.name + "_count")
                == Double(figures.durations.count))
        let sum = try #require(histogram.value(labels, name: histogram.name + "_sum"))
        #expect(abs(sum - figures.durations.reduce(0, +)) < 1e-6)

        let end = try #require(lines.last { $0["event"] as? String == "run.end" })
        let tasks = try #require(end["tasks"] as? [String: Int])
        let byOutcome = try #require(metrics["courier_run_tasks"])
        #expect(byOutcome.value(labels.merging(["outcome": "ok"]) { $1 }) == Double(tasks["ok"]!))
        #expect(
            byOutcome.value(labels.merging(["outcome": "failed"]) { $1 })
                == Double(tasks["failed"]!))
        #expect(metrics["courier_run_tasks_planned"]?.value(labels) == Double(tasks["total"]!))
        #expect(
            metrics["courier_last_exit_code"]?.value(labels) == Double(end["exitCode"] as! Int))
        #expect(metrics["courier_run_running"]?.value(labels) == 0)
        let duration = try #require(metrics["courier_run_duration_seconds"]?.value(labels))
        let durationMs = try #require((end["durationMs"] as? NSNumber)?.doubleValue)
        #expect(abs(duration * 1000 - durationMs) < 0.001)
        // The sum of the requests by class is run.end's count of them.
        #expect(requests.samples.map(\.value).reduce(0, +) == Double(end["requests"] as! Int))
    }

    /// The Prometheus project's own Python parser reads the file, every sample as ours does.
    /// promtool's check is a test of its own (``promtoolAccepts``), skipped with its reason
    /// where promtool is not installed.
    static func expectOthersRead(_ file: URL, as ours: PrometheusExposition) async throws {
        let check = try await CourierBinary.run(
            [PackagePaths.fixtures.appendingPathComponent("check_metrics.py").path, file.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(check.status == 0, "\(check.stderr)")
        let samples = check.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let ourCount = ours.order.compactMap { ours[$0]?.samples.count }.reduce(0, +)
        #expect(samples.count == ourCount && ourCount > 20)
        for sample in samples {
            let name = sample["name"] as? String ?? ""
            let family = sample["family"] as? String ?? ""
            let labels = sample["labels"] as? [String: String] ?? [:]
            let value = (sample["value"] as? String).flatMap(PrometheusExposition.number)
            let mine = ours[family]?.samples.first { $0.name == name && $0.labels == labels }
            #expect(mine?.value == value, "\(name) \(labels)")
        }
    }

    static let promtool = "/usr/bin/promtool"

    /// promtool (Debian's prometheus package, 96 MB, not a test dependency) lints a run's file.
    @Test(
        "promtool check metrics accepts the file",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: promtool),
            "promtool is not installed (Debian's prometheus package; make test does not install it)"
        ))
    func promtoolAccepts() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "a", "path": "/echo"}, {"id": "b", "path": "/status/500"}"#,
            extra: #""retry": {"maxAttempts": 1},"#)
        let file = space.folder.appendingPathComponent("courier-e2e.prom")
        _ = try await space.run(["--metrics-file", file.path], backend: "curl")
        let lint = try await CourierBinary.run(
            ["-c", "\(Self.promtool) check metrics < '\(file.path)'"],
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(lint.status == 0 && lint.stdout.isEmpty, "\(lint.stdout) \(lint.stderr)")
    }

    @Test(
        "the file's figures are the log's; the last success moves only on a run that succeeds",
        arguments: backends)
    func agreesWithLog(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("metrics")
        let refused = "http://127.0.0.1:\(unusedLoopbackPort())/x"
        // Every class: 2xx, a 304 and a 404 that are expected, a 503 retried into a 200, a
        // 500 that fails, a refused connection, and a body sent.
        let mixed = #"""
            {"id": "a{n}", "path": "/echo", "foreach": {"n": {"range": [1, 3]}}},
            {"id": "post", "method": "POST", "path": "/echo", "json": {"name": "ada", "n": 12345}},
            {"id": "gone", "path": "/status/404", "expect": {"status": [404]}},
            {"id": "same", "path": "/status/304", "expect": {"status": [304]}},
            {"id": "flaky", "path": "/flaky", "query": {"key": "\#(key)", "fail": "1"}},
            {"id": "bad", "path": "/status/500", "retry": {"maxAttempts": 1}},
            {"id": "refused", "url": "\#(refused)", "retry": {"maxAttempts": 1}}
            """#
        try space.writeJob(
            tasks: mixed, extra: #""retry": {"maxAttempts": 3, "initialDelay": 0.05},"#)
        let file = space.folder.appendingPathComponent("courier-e2e.prom")
        let first = try await space.run(
            ["--metrics-file", file.path, "--metrics-interval", "1"], backend: backend)
        #expect(first.status == 1, "\(first.stderr)")
        let lines = try space.logLines()
        let metrics = try Self.read(file)
        try Self.expectAgreement(metrics, log: lines)
        try await Self.expectOthersRead(file, as: metrics)
        let figures = LogFigures(lines)
        #expect(figures.byClass == ["2xx": 5, "3xx": 1, "4xx": 1, "5xx": 2, "error": 1])
        #expect(figures.retries == 1 && figures.sent > 0)
        #expect(metrics["courier_last_success_timestamp_seconds"] == nil, "never succeeded")
        let start = try #require(
            metrics["courier_run_start_timestamp_seconds"]?.value(["job": "e2e"]))
        #expect(abs(start - Date().timeIntervalSince1970) < 600, "Unix seconds: \(start)")

        // A run that succeeds sets the last success to when it ended.
        try space.writeJob(tasks: #"{"id": "a", "path": "/echo"}"#)
        try FileManager.default.removeItem(at: space.logs)
        let second = try await space.run(["--metrics-file", file.path], backend: backend)
        #expect(second.status == 0, "\(second.stderr)")
        let succeeded = try Self.read(file)
        let secondLog = try space.logLines()
        try Self.expectAgreement(succeeded, log: secondLog)
        let success = try #require(
            succeeded["courier_last_success_timestamp_seconds"]?.value(["job": "e2e"]))
        let end = try #require(secondLog.last?["ts"] as? String)
        let endTime = try #require(ISO8601DateFormatter.withMilliseconds.date(from: end))
        #expect(abs(success - endTime.timeIntervalSince1970) < 1, "\(success) vs \(end)")

        // A run that fails leaves it exactly as it was.
        try space.writeJob(
            tasks: #"{"id": "bad", "path": "/status/500"}"#, extra: #""retry": {"maxAttempts": 1},"#
        )
        try FileManager.default.removeItem(at: space.logs)
        let third = try await space.run(["--metrics-file", file.path], backend: backend)
        #expect(third.status == 1)
        let failed = try Self.read(file)
        try Self.expectAgreement(failed, log: try space.logLines())
        #expect(failed["courier_last_success_timestamp_seconds"]?.value() == success)
        #expect(failed["courier_last_exit_code"]?.value() == 1)
    }

    @Test("the file is whole whenever it is read: each version is renamed into place")
    func wholeAtEveryMoment() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks:
                #"{"id": "s{n}", "path": "/slow", "query": {"ms": "400"}, "foreach": {"n": {"range": [1, 8]}}}"#,
            extra: #""concurrency": 1,"#)
        let file = space.folder.appendingPathComponent("m.prom")
        // On a thread of its own, started before the run: the cooperative pool may be held by
        // other tests for longer than the run takes, and a reader that waited its turn there
        // would miss the versions written meanwhile.
        let reader = FileReader(file)
        let running = try CourierBinary.launch(
            [
                "run", "job.json", "--log-dir", space.logs.path, "--no-progress",
                "--metrics-file", file.path, "--metrics-interval", "1",
            ], directory: space.folder)
        let (status, _, stderr) = await running.exit(seconds: 300)
        let (inodes, whole, runningSeen, failures) = await reader.result()
        #expect(status == 0, "\(stderr)")
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(runningSeen, "a version written while the run went on was read")
        #expect(whole >= 2)
        #expect(inodes.count >= 2, "each version is a new file renamed over the old")
        let metrics = try Self.read(file)
        try Self.expectAgreement(metrics, log: try space.logLines())
        // Nothing but the file is left: no temporary, nothing else the collector would read.
        let names = try FileManager.default.contentsOfDirectory(atPath: space.folder.path)
        #expect(names.filter { $0.contains("m.prom") } == ["m.prom"], "\(names)")
    }

    /// Reads `file` every 10 ms until a version says the run ended (60 s and 6,000 reads at
    /// most): the inodes seen, how many versions read whole, whether one said the run was
    /// going on, and what did not read.
    /// Reads the metrics file every 10 ms on a thread of its own, from its creation, until a
    /// version says the run has ended (or 60 s): the inodes seen, how many versions parsed
    /// whole, whether one said the run was still going, and what did not parse.
    final class FileReader: Sendable {
        typealias Outcome = (inodes: Set<UInt64>, whole: Int, runningSeen: Bool, failures: [String])
        private let outcome = LockedBox<Outcome?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ file: URL) {
            Thread.detachNewThread { [outcome, done] in
                outcome.set(Self.read(file))
                done.signal()
            }
        }

        /// Waits, off the pool, for the reading to end.
        func result() async -> Outcome {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { [outcome, done] in
                    done.wait()
                    continuation.resume(returning: outcome.get()!)
                }
            }
        }

        private static func read(_ file: URL) -> Outcome {
            var inodes = Set<UInt64>()
            var whole = 0
            var runningSeen = false
            var failures: [String] = []
            let deadline = Date().addingTimeInterval(60)
            for _ in 0..<6_000 where Date() < deadline {
                var info = stat()
                if stat(file.path, &info) == 0,
                    let text = try? String(contentsOf: file, encoding: .utf8)
                {
                    inodes.insert(UInt64(info.st_ino))
                    do {
                        let parsed = try PrometheusExposition.parse(text)
                        whole += 1
                        let state = parsed["courier_run_running"]?.value()
                        if state == 1 { runningSeen = true }
                        if parsed["courier_run_request_duration_seconds"] == nil {
                            failures.append("a version without its histogram")
                        }
                        if state == 0 { break }
                    } catch {
                        failures.append("\(error): \(text)")
                    }
                }
                usleep(10_000)
            }
            return (inodes, whole, runningSeen, failures)
        }
    }

    @Test("a shard's file says its shard; a folder that does not exist is refused, nothing sent")
    func shardAndMissingFolder() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("metrics-refused")
        try space.writeJob(
            tasks:
                #"{"id": "a{n}", "path": "/echo", "query": {"key": "\#(key)"}, "foreach": {"n": {"range": [1, 6]}}}"#
        )
        let missing = space.folder.appendingPathComponent("no/such/folder/m.prom")
        let refused = try await space.run(["--metrics-file", missing.path], backend: "curl")
        #expect(
            refused.status == 2 && refused.stderr.contains("does not exist"), "\(refused.stderr)")
        #expect(try await ServerHits.of(key, on: space.server).count == 0)

        // Under a private umask (a systemd unit's UMask=0027 or stricter), as node_exporter's
        // own user must still read the file.
        let file = space.folder.appendingPathComponent("shard.prom")
        let run = try await CourierBinary.run(
            [
                "-c",
                "umask 077 && exec \"$0\" run job.json --log-dir logs --no-progress --metrics-file shard.prom --shard 1/2",
                CourierBinary.url.path,
            ], executable: URL(fileURLWithPath: "/bin/sh"), directory: space.folder)
        #expect(run.status == 0, "\(run.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
        #expect(mode as? Int == 0o644, "readable by node_exporter's user")
        let log = try #require(try ReplayTests.logFiles(space).first)
        let logMode = try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions]
        #expect(logMode as? Int == 0o600, "the umask still holds for the rest")
        let metrics = try Self.read(file)
        try Self.expectAgreement(metrics, log: try space.logLines(), shard: "1/2")
    }
}

extension ISO8601DateFormatter {
    /// `2026-11-22T04:15:21.147Z`, the log's `ts`.
    static var withMilliseconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
