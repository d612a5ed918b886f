import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// The metrics file: Prometheus text that a strict reader of the format takes, figures that
/// add up as the log's lines do, and the last success time carried over by failed runs.
@Suite("metrics file")
struct MetricsFileTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("label values and HELP text are escaped as the format says; numbers in Go's syntax")
    func escaping() throws {
        #expect(PrometheusText.escapeLabel(#"a\b"c"# + "\nd") == #"a\\b\"c\nd"#)
        #expect(PrometheusText.escapeHelp(#"say "x" \ y"# + "\nz") == #"say "x" \\ y\nz"#)
        #expect(PrometheusText.number(3) == "3")
        #expect(PrometheusText.number(0.005) == "0.005")
        #expect(PrometheusText.number(.infinity) == "+Inf")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(.nan) == "NaN")
        #expect(PrometheusText.number(1_795_685_821.799) == "1795685821.799")
        var text = PrometheusText()
        text.family("x_info", .gauge, help: "odd \"labels\"\\")
        text.sample("x_info", [("job", "a\"b\\c\nd"), ("shard", "1/2")], 1)
        let parsed = try PrometheusExposition.parse(text.text)
        #expect(parsed["x_info"]?.help == "odd \"labels\"\\")
        #expect(parsed["x_info"]?.value(["job": "a\"b\\c\nd", "shard": "1/2"]) == 1)
        #expect(
            PrometheusText.value(of: "x_info", labels: [("job", "a\"b\\c\nd")], in: text.text) == 1)
    }

    @Test("request figures add up per line: classes, retries, bytes, buckets on their bounds")
    func figures() {
        let figures = RequestFigures()
        figures.record(status: 200, retried: false, bytesSent: 10, bytesReceived: 100, totalMs: 5)
        figures.record(status: 503, retried: true, bytesSent: 10, bytesReceived: 7, totalMs: 100)
        figures.record(
            status: nil, retried: false, bytesSent: 0, bytesReceived: 0, totalMs: 100.0004)
        figures.record(
            status: 404, retried: false, bytesSent: 0, bytesReceived: 3, totalMs: 300_000)
        let counts = figures.snapshot
        #expect(counts.byClass == ["2xx": 1, "5xx": 1, "error": 1, "4xx": 1])
        #expect(counts.retries == 1 && counts.requests == 4)
        #expect(counts.bytesSent == 20 && counts.bytesReceived == 110)
        // 5 ms on the first bound; 100 ms and 100.0004 ms (the log writes 100) on 0.1 s; 300 s
        // above every bound.
        let index = { (bound: Double) in RequestFigures.bounds.firstIndex(of: bound)! }
        #expect(counts.buckets[index(0.005)] == 1)
        #expect(counts.buckets[index(0.1)] == 2)
        #expect(counts.buckets.last == 1)
        #expect(counts.buckets.reduce(0, +) == 4)
        #expect(
            RequestFigures.statusClass(101) == "1xx" && RequestFigures.statusClass(nil) == "error")
    }

    static func snapshot(exitCode: Int32?, at ended: Date? = nil) -> MetricsSnapshot {
        let figures = RequestFigures()
        figures.record(status: 200, retried: false, bytesSent: 2, bytesReceived: 40, totalMs: 12.5)
        figures.record(status: 500, retried: true, bytesSent: 2, bytesReceived: 1, totalMs: 3)
        return MetricsSnapshot(
            started: Date(timeIntervalSince1970: 1_800_000_000), duration: 1.25, tasksOK: 1,
            tasksFailed: exitCode == 0 ? 0 : 1, tasksPlanned: 2, requests: figures.snapshot,
            exitCode: exitCode, ended: ended)
    }

    @Test("a whole file reads strictly, every family with HELP and TYPE, labelled by job and shard")
    func wholeFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = MetricsSettings(file: folder.appendingPathComponent("c.prom"))
        let file = MetricsFile(settings: settings, job: "nightly", shard: Shard(index: 1, count: 4))
        try file.write(Self.snapshot(exitCode: 1, at: Date(timeIntervalSince1970: 1_800_000_002)))
        let text = try String(contentsOf: settings.file, encoding: .utf8)
        let parsed = try PrometheusExposition.parse(text)
        for name in parsed.order {
            let family = try #require(parsed[name])
            #expect(family.help != nil && family.type != "untyped", "\(name)")
            for sample in family.samples {
                #expect(sample.labels["job"] == "nightly" && sample.labels["shard"] == "1/4")
            }
        }
        let labels = ["job": "nightly", "shard": "1/4"]
        #expect(parsed["courier_run_requests"]?.value(labels.merging(["class": "5xx"]) { $1 }) == 1)
        #expect(parsed["courier_run_requests"]?.value(labels.merging(["class": "3xx"]) { $1 }) == 0)
        #expect(parsed["courier_run_retries"]?.value() == 1)
        #expect(parsed["courier_run_sent_bytes"]?.value() == 4)
        #expect(parsed["courier_run_received_bytes"]?.value() == 41)
        #expect(parsed["courier_run_running"]?.value() == 0)
        #expect(parsed["courier_last_exit_code"]?.value() == 1)
        #expect(parsed["courier_last_success_timestamp_seconds"] == nil, "never succeeded")
        let histogram = try #require(parsed["courier_run_request_duration_seconds"])
        #expect(histogram.type == "histogram")
        #expect(histogram.value(["le": "0.005"], name: histogram.name + "_bucket") == 1)
        #expect(histogram.value(["le": "0.025"], name: histogram.name + "_bucket") == 2)
        let sum = try #require(histogram.value(name: histogram.name + "_sum"))
        #expect(abs(sum - 0.0155) < 1e-12)
        // Nothing but the file is left in its folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["c.prom"])
    }

    @Test("a tick that comes after the run's last write changes nothing")
    func aLateTickCannotReplaceTheFinalFigures() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = MetricsSettings(file: folder.appendingPathComponent("c.prom"))
        let metrics = JobRunner.RunMetrics(
            file: MetricsFile(settings: settings, job: "j", shard: nil))
        func exitCode() throws -> Double? {
            try PrometheusExposition.parse(String(contentsOf: settings.file, encoding: .utf8))[
                "courier_last_exit_code"]?.value()
        }
        #expect(metrics.write(final: false) { Self.snapshot(exitCode: nil) } == nil)
        #expect(metrics.write(final: true) { Self.snapshot(exitCode: 1) } == nil)
        #expect(try exitCode() == 1)
        // A loaded machine ran a tick, its figures taken before the end, after the last write:
        // the file said the run was still going, with no request. It is dropped now.
        var asked = false
        #expect(
            metrics.write(final: false) {
                asked = true
                return Self.snapshot(exitCode: nil)
            } == nil)
        #expect(!asked, "no figures are taken after the last write")
        #expect(try exitCode() == 1)
    }

    @Test("the last success moves only with exit code 0; failed runs and running ones keep it")
    func lastSuccessCarriesOver() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = MetricsSettings(file: folder.appendingPathComponent("c.prom"))
        func read() throws -> PrometheusExposition {
            try PrometheusExposition.parse(String(contentsOf: settings.file, encoding: .utf8))
        }
        let success = Date(timeIntervalSince1970: 1_800_000_100.5)
        try MetricsFile(settings: settings, job: "j", shard: nil).write(
            Self.snapshot(exitCode: 0, at: success))
        #expect(try read()["courier_last_success_timestamp_seconds"]?.value() == 1_800_000_100.5)
        #expect(try read()["courier_last_exit_code"]?.value(["shard": "whole"]) == 0)

        // The next run: while it runs, and after it fails, the success time stands.
        let next = MetricsFile(settings: settings, job: "j", shard: nil)
        try next.write(Self.snapshot(exitCode: nil))
        #expect(try read()["courier_run_running"]?.value() == 1)
        #expect(try read()["courier_last_success_timestamp_seconds"]?.value() == 1_800_000_100.5)
        #expect(try read()["courier_last_exit_code"]?.value() == 0, "the last run that ended")
        try next.write(Self.snapshot(exitCode: 1, at: success.addingTimeInterval(900)))
        #expect(try read()["courier_last_success_timestamp_seconds"]?.value() == 1_800_000_100.5)
        #expect(try read()["courier_last_exit_code"]?.value() == 1)
        // And the one after that carries it still.
        try MetricsFile(settings: settings, job: "j", shard: nil).write(
            Self.snapshot(exitCode: 130))
        #expect(try read()["courier_last_success_timestamp_seconds"]?.value() == 1_800_000_100.5)

        // Another job's (or shard's) file carries nothing over.
        try MetricsFile(settings: settings, job: "other", shard: nil).write(
            Self.snapshot(exitCode: 1))
        #expect(try read()["courier_last_success_timestamp_seconds"] == nil)
    }

    @Test("a temporary a killed run left beside the file is removed; others' files stay")
    func leftovers() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = MetricsSettings(file: folder.appendingPathComponent("c.prom"))
        for name in [".c.prom.metrics.ABCD1234.tmp", ".d.prom.metrics.ABCD1234.tmp", "d.prom"] {
            try Data().write(to: folder.appendingPathComponent(name))
        }
        try MetricsFile(settings: settings, job: "j", shard: nil).write(Self.snapshot(exitCode: 0))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                == [".d.prom.metrics.ABCD1234.tmp", "c.prom", "d.prom"])
    }

    @Test("the strict reader refuses what the format forbids")
    func strictReader() {
        let bad = [
            "x 1",  // no final line break
            "x{a=\"1\"} 1\nx{a=\"1\"} 2\n",  // a series twice
            "# TYPE x gauge\nx 1\ny 1\nx{b=\"2\"} 1\n",  // a family's lines apart
            "x{a=\"\\t\"} 1\n",  // an escape the format lacks
            "x{a=1} 1\n",  // an unquoted label value
            "x one\n",  // not a number
            "\nx 1\n",  // an empty line
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
        ]
        for text in bad {
            #expect(throws: PrometheusExposition.Failure.self, "\(text)") {
                try PrometheusExposition.parse(text)
            }
        }
    }

    @Test("a push goes to the job's and shard's group, each value in base64url")
    func pushGroupURL() {
        let gateway = URL(string: "http://127.0.0.1:9091/")!
        // "2/4" holds a slash, which a path segment cannot: base64url "Mi80".
        #expect(
            MetricsPush.groupURL(gateway: gateway, job: "nightly", shard: "2/4").absoluteString
                == "http://127.0.0.1:9091/metrics/job@base64/bmlnaHRseQ==/shard@base64/Mi80")
        // Under a proxy's path; "+" and "/" of base64 become "-" and "_"; empty is "=".
        let proxied = URL(string: "https://ops.example/pushgateway")!
        #expect(
            MetricsPush.groupURL(gateway: proxied, job: "\u{FB}\u{FF}", shard: "").absoluteString
                == "https://ops.example/pushgateway/metrics/job@base64/w7vDvw==/shard@base64/=")
        #expect(
            MetricsPush.groupURL(gateway: proxied, job: "?>?", shard: "whole").absoluteString
                == "https://ops.example/pushgateway/metrics/job@base64/Pz4_/shard@base64/d2hvbGU=")
        let queried = URL(string: "http://127.0.0.1:9091/?tenant=a")!
        #expect(
            MetricsPush.groupURL(gateway: queried, job: "j", shard: "whole").absoluteString
                == "http://127.0.0.1:9091/metrics/job@base64/ag==/shard@base64/d2hvbGU=?tenant=a")
    }
}
