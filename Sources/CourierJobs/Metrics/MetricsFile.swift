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
        RunMetricsText(
            job: job, shard: shard, previousSuccess: previousSuccess,
            previousExitCode: previousExitCode
        ).render(snapshot)
    }
}
