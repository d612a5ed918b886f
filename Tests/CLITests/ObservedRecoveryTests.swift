import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Trace context and the metrics push together, through a run killed with `kill -9` and its
/// `--resume`: the gateway shows the killed run under way, then the resume's end; each run is
/// a trace of its own, every request of it carrying that trace; the two logs export as two
/// traces, the killed one marked so.
@Suite("observed recovery")
struct ObservedRecoveryTests {
    @Test("kill -9 and --resume with --trace and --metrics-push")
    func killedAndResumed() async throws {
        let gateway = try TestServers.pushgateway()
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = "obs-\(UUID().uuidString.prefix(8).lowercased())"
        let key = FixtureServer.uniqueKey("obs")
        let gate = FixtureServer.uniqueKey("obs-gate")
        try space.writeJob(
            name: job,
            tasks: #"""
                {"id": "e{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 3]}}},
                {"id": "held", "path": "/gate", "query": {"name": "\#(gate)", "key": "\#(key)"}, "timeout": 900}
                """#, extra: #""concurrency": 4,"#)
        let arguments = [
            "run", "job.json", "--log-dir", space.logs.path, "--no-progress", "--trace",
            "--metrics-push", gateway.absoluteString, "--metrics-interval", "1",
        ]
        let killed = try CourierBinary.launch(arguments, directory: space.folder)
        // Killed once the echoes are logged and the gateway shows the run under way.
        let seen = await OffPool.when {
            let samples = (try? MetricsPushTests.gatewaySamples(gateway, job: job)) ?? []
            let ok = samples.first {
                $0.name == "courier_run_tasks" && $0.labels["outcome"] == "ok"
            }?.value
            return MetricsPushTests.value(samples, "courier_run_running") == 1 && ok == 3
        } then: {
            killed.send(SIGKILL)
        }
        #expect(seen, "the gateway never showed three tasks done with the run under way")
        _ = await killed.wait(seconds: 300)
        let stale = try MetricsPushTests.gatewaySamples(gateway, job: job)
        #expect(
            MetricsPushTests.value(stale, "courier_run_running") == 1, "killed: still 'running'")

        // The resume: the held task only, released once it is sent.
        let release = space.server.url("/toggle/on?name=\(gate)")
        _ = try LoopbackHTTP.exchange("GET", release)
        let resumed = try await CourierBinary.run(arguments + ["--resume"], directory: space.folder)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let ended = try MetricsPushTests.gatewaySamples(gateway, job: job)
        #expect(MetricsPushTests.value(ended, "courier_run_running") == 0)
        #expect(MetricsPushTests.value(ended, "courier_last_exit_code") == 0)
        #expect(MetricsPushTests.value(ended, "courier_last_success_timestamp_seconds") != nil)

        // Two runs, two traces; each request carries its run's.
        let lines = try space.logLines(job: job)
        let traces = lines.filter { $0["event"] as? String == "run.start" }.compactMap {
            ($0["trace"] as? [String: Any])?["traceId"] as? String
        }
        #expect(traces.count == 2 && Set(traces).count == 2, "\(traces)")
        let hits = try await ServerHits.of(key, on: space.server)
        #expect(hits.count == 5, "three echoes and the held task twice")
        for request in hits.requests {
            let header = request.header("traceparent") ?? ""
            #expect(traces.contains { header.contains("-\($0)-") }, "\(request.path): \(header)")
        }
        let resent = try #require(hits.requests.last?.header("traceparent"))
        #expect(resent.contains("-\(traces[1])-"), "the resume's request is in the resume's trace")

        // The logs export as the two traces, the killed run's span marked as killed.
        let export = space.folder.appendingPathComponent("traces.json")
        let report = try await CourierBinary.run(
            ["report", "--otlp", export.path, space.logs.appendingPathComponent(job).path])
        #expect(report.status == 0, "\(report.stderr)")
        let spans = try TraceRunTests.spans(String(contentsOf: export, encoding: .utf8)).spans
        let roots = spans.filter { $0["kind"] as? Int == 1 }
        #expect(Set(roots.compactMap { $0["traceId"] as? String }) == Set(traces))
        let killedRoot = roots.first { $0["traceId"] as? String == traces[0] }
        // A boolean attribute, as JSONSerialization reads it back (an NSNumber).
        let marked = OTLPExportTests.attributes(killedRoot ?? [:])["courier.killed"]
        #expect(marked == "1" || marked == "true", "\(marked ?? "absent")")
    }
}
