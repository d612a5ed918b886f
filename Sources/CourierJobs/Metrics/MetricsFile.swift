import Courier
import Foundation

/// `courier run --metrics-file FILE [--metrics-interval SECONDS]`.
struct MetricsSettings: Sendable {
    /// The `.prom` file node_exporter's textfile collector reads.
    var file: URL
    /// Seconds between writes while the run goes on.
    var interval: TimeInterval

    static let defaultInterval: TimeInterval = 15

    init(file: URL, interval: TimeInterval = MetricsSettings.defaultInterval) {
        self.file = file
        self.interval = interval
    }
}

/// A run's figures at one moment, as its metrics file states them.
struct MetricsSnapshot: Sendable {
    var started: Date
    var duration: TimeInterval
    var tasksOK = 0
    var tasksFailed = 0
    /// The tasks the run means to settle, as far as it knows.
    var tasksPlanned = 0
    var requests = RequestFigures.Counts()
    /// The run's exit code once it has ended; `nil` while it goes on.
    var exitCode: Int32?
    /// When the run ended, once it has.
    var ended: Date?
}

/// One run's metrics file in Prometheus's text format (docs/metrics.md), for node_exporter's
/// textfile collector: replaced whole every few seconds and at the end, each version written
/// to a temporary file beside it (a name that does not end in `.prom`, which the collector
/// skips), `fsync`ed and renamed over it (``FileReplacement``), so that a scrape never reads
/// half a file.
///
/// `courier_last_success_timestamp_seconds` and `courier_last_exit_code` describe the last run
/// that ended: a run carries them over from the file it found (matched by its `job` and `shard`
/// labels) until it ends, and moves the success time only when it ends with exit code 0, so
/// that an alert on its age fires however many runs fail in a row.
final class MetricsFile: Sendable {
    let settings: MetricsSettings
    let job: String
    /// `I/N` for a shard, `whole` for a run of the whole job.
    let shard: String
    let previousSuccess: Double?
    let previousExitCode: Double?
    /// The temporary's tag: `.NAME.metrics.XXXXXXXX.tmp`.
    static let tag = "metrics"

    init(settings: MetricsSettings, job: String, shard: Shard?) {
        self.settings = settings
        self.job = job
        self.shard = shard?.description ?? "whole"
        let labels = [("job", job), ("shard", self.shard)]
        let previous =
            (try? FileSystem.read(settings.file, limit: 4 << 20)).map {
                String(decoding: $0, as: UTF8.self)
            } ?? ""
        previousSuccess = PrometheusText.value(
            of: "courier_last_success_timestamp_seconds", labels: labels, in: previous)
        previousExitCode = PrometheusText.value(
            of: "courier_last_exit_code", labels: labels, in: previous)
        Self.removeLeftovers(of: settings.file)
    }

    /// Temporaries a killed run left beside the file (only this file's, by name).
    private static func removeLeftovers(of file: URL) {
        let folder = file.deletingLastPathComponent()
        let prefix = ".\(file.lastPathComponent).\(tag)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// Replaces the file with `snapshot`'s figures.
    ///
    /// Every version is readable by all (`0644`) whatever the run's umask (a systemd unit's
    /// `UMask=0027` keeps the outputs private): node_exporter reads it as a user of its own.
    /// It holds no secret.
    func write(_ snapshot: MetricsSnapshot) throws(FileError) {
        let replacement = try FileReplacement(replacing: settings.file, tag: Self.tag)
        do {
            try replacement.write(Data(render(snapshot).utf8))
        } catch {
            replacement.discard()
            throw error
        }
        try replacement.commit(mode: 0o644)
    }

    /// The file's text for `snapshot`.
    func render(_ snapshot: MetricsSnapshot) -> String {
        let labels = [("job", job), ("shard", shard)]
        var text = PrometheusText()
        func gauge(_ name: String, _ help: String, _ value: Double) {
            text.gauge(name, help: help, labels: labels, value)
        }
        gauge(
            "courier_run_start_timestamp_seconds", "When the latest run started (Unix time).",
            snapshot.started.timeIntervalSince1970)
        gauge(
            "courier_run_duration_seconds",
            "How long the latest run has taken so far, or took once it ended.", snapshot.duration)
        gauge(
            "courier_run_running", "1 while the latest run goes on, 0 once it has ended.",
            snapshot.exitCode == nil ? 1 : 0)
        text.family(
            "courier_run_tasks", .gauge,
            help:
                "Tasks of the latest run by final outcome so far (run.end's tasks.ok and tasks.failed)."
        )
        text.sample("courier_run_tasks", labels + [("outcome", "ok")], Double(snapshot.tasksOK))
        text.sample(
            "courier_run_tasks", labels + [("outcome", "failed")], Double(snapshot.tasksFailed))
        gauge(
            "courier_run_tasks_planned",
            "Tasks the latest run means to settle, as far as it knows (fan-out finds more as it goes).",
            Double(snapshot.tasksPlanned))
        requestFamilies(snapshot.requests, labels: labels, into: &text)
        lastRunFamilies(snapshot, labels: labels, into: &text)
        return text.text
    }

    /// The latest run's requests: by status class, retries, bytes, and the duration
    /// histogram.
    private func requestFamilies(
        _ requests: RequestFigures.Counts, labels: [(String, String)],
        into text: inout PrometheusText
    ) {
        func gauge(_ name: String, _ help: String, _ value: Double) {
            text.gauge(name, help: help, labels: labels, value)
        }
        text.family(
            "courier_run_requests", .gauge,
            help:
                "Request attempts of the latest run by status class, or error when no response came."
        )
        var classes = RequestFigures.classes
        classes += requests.byClass.keys.filter { !classes.contains($0) }.sorted()
        for name in classes {
            text.sample(
                "courier_run_requests", labels + [("class", name)],
                Double(requests.byClass[name] ?? 0))
        }
        gauge(
            "courier_run_retries", "Request attempts of the latest run that were retried.",
            Double(requests.retries))
        gauge(
            "courier_run_sent_bytes", "Request body bytes the latest run sent.",
            Double(requests.bytesSent))
        gauge(
            "courier_run_received_bytes", "Response body bytes the latest run received.",
            Double(requests.bytesReceived))
        let histogram = "courier_run_request_duration_seconds"
        text.family(
            histogram, .histogram,
            help: "Request attempts of the latest run by duration (the log's timings.totalMs).")
        var cumulative = 0
        for (index, bound) in RequestFigures.bounds.enumerated() {
            cumulative += requests.buckets[index]
            text.sample(
                histogram + "_bucket", labels + [("le", PrometheusText.number(bound))],
                Double(cumulative))
        }
        text.sample(histogram + "_bucket", labels + [("le", "+Inf")], Double(requests.requests))
        text.sample(histogram + "_sum", labels, requests.latencySum)
        text.sample(histogram + "_count", labels, Double(requests.requests))
    }

    /// What outlives a run: the last exit code, and when a run last succeeded.
    private func lastRunFamilies(
        _ snapshot: MetricsSnapshot, labels: [(String, String)], into text: inout PrometheusText
    ) {
        func gauge(_ name: String, _ help: String, _ value: Double) {
            text.gauge(name, help: help, labels: labels, value)
        }
        let exitCode = snapshot.exitCode.map(Double.init) ?? previousExitCode
        if let exitCode {
            gauge(
                "courier_last_exit_code",
                "Exit code of the last run that ended (0 ok, 1 some task failed, 130/143 interrupted).",
                exitCode)
        }
        var lastSuccess = previousSuccess
        if snapshot.exitCode == 0, let ended = snapshot.ended {
            lastSuccess = ended.timeIntervalSince1970
        }
        if let lastSuccess {
            gauge(
                "courier_last_success_timestamp_seconds",
                "When a run last ended with exit code 0 (Unix time); runs that fail leave it.",
                lastSuccess)
        }
    }
}
