import Foundation

/// A run's figures in Prometheus's text format (docs/metrics.md): what the metrics file holds
/// and what `--metrics-push` sends, the same text for both.
///
/// `courier_last_exit_code` and `courier_last_success_timestamp_seconds` describe the last run
/// that ended: the previous values are what the file held (a push passes none: the gateway
/// keeps a metric a push leaves out), and the success time moves only when the run ends with
/// exit code 0.
struct RunMetricsText {
    let job: String
    /// `I/N` for a shard, `whole` for a run of the whole job.
    let shard: String
    var previousSuccess: Double?
    var previousExitCode: Double?

    /// The text for `snapshot`.
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
                "Exit code of the last run that ended (0 ok, 1 some task failed, 4 every task ok but a data check failed, 130/143 interrupted).",
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
