import Courier
import Foundation

/// What a run tells the world outside its log: its metrics file (`--metrics-file`) or push
/// (`--metrics-push`) and its dead man's switch pings (`notify`). None changes the run's exit
/// code; a failure of any is one warning on stderr.
extension JobRunner {
    /// A run's metrics file and push, and the figures its log lines add to.
    struct RunMetrics: Sendable {
        let file: MetricsFile?
        let push: MetricsPush?
        /// Seconds between the writes and pushes while the run goes on.
        let interval: TimeInterval
        let figures = RequestFigures()
        /// Set once a write failed and said so: one warning per run.
        let warned = Locked(false)
        /// Set once a push failed and said so: one warning per run.
        let pushWarned = Locked(false)
        /// Set by the last write, under the lock every write holds: a tick whose figures were
        /// taken before the end cannot land after it (a loaded machine once renamed a tick's
        /// file of zeros over the final one).
        let finished = Locked(false)

        init(file: MetricsFile?, push: MetricsPush? = nil, interval: TimeInterval? = nil) {
            self.file = file
            self.push = push
            self.interval = interval ?? file?.settings.interval ?? MetricsSettings.defaultInterval
        }

        /// Takes the figures and writes them, unless the final figures are written already;
        /// `final` makes this write the last. Figures and file are taken and written under one
        /// lock, so the file ends with the final figures whatever a tick was doing. Returns
        /// the write's failure.
        func write(final: Bool, _ snapshot: () -> MetricsSnapshot) -> FileError? {
            guard let file else { return nil }
            return finished.withLock { finished -> FileError? in
                guard !finished else { return nil }
                if final { finished = true }
                do throws(FileError) {
                    try file.write(snapshot())
                    return nil
                } catch {
                    return error
                }
            }
        }
    }

    /// Reads the metrics file as the run finds it (the values it carries over), once the
    /// job's lock is held; `nil` when the run neither writes nor pushes metrics.
    func startMetrics() -> RunMetrics? {
        let file = options.metrics.map {
            MetricsFile(settings: $0, job: job.name, shard: options.shard)
        }
        let push = options.metricsPush.map {
            MetricsPush(settings: $0, job: job.name, shard: options.shard)
        }
        guard file != nil || push != nil else { return nil }
        return RunMetrics(
            file: file, push: push,
            interval: options.metrics?.interval ?? options.metricsPush?.interval)
    }

    /// Writes and pushes the figures now, then every ``RunMetrics/interval`` until cancelled.
    func tickMetrics(_ metrics: RunMetrics, progress: Progress, started: Date) -> Task<Void, Never>
    {
        Task {
            while !Task.isCancelled {
                let snapshot = { [time] in
                    let counts = progress.snapshot
                    return MetricsSnapshot(
                        started: started, duration: time.date().timeIntervalSince(started),
                        tasksOK: counts.ok, tasksFailed: counts.failed, tasksPlanned: counts.total,
                        requests: metrics.figures.snapshot)
                }
                write(metrics, final: false, snapshot)
                await push(metrics, snapshot(), final: false)
                try? await time.sleep(for: .seconds(metrics.interval))
            }
        }
    }

    /// The last write and push: the run's counts as `run.end` has them, and its exit code.
    func finishMetrics(_ metrics: RunMetrics, summary: RunSummary, started: Date) async {
        let snapshot = MetricsSnapshot(
            started: started, duration: summary.duration, tasksOK: summary.ok,
            tasksFailed: summary.failed, tasksPlanned: summary.total,
            requests: metrics.figures.snapshot, exitCode: summary.exitCode,
            ended: started.addingTimeInterval(summary.duration))
        write(metrics, final: true) { snapshot }
        await push(metrics, snapshot, final: true)
    }

    /// Writes the figures (``RunMetrics/write(final:_:)``); a failure is one warning a run.
    private func write(_ metrics: RunMetrics, final: Bool, _ snapshot: () -> MetricsSnapshot) {
        if let error = metrics.write(final: final, snapshot) {
            if Self.first(metrics.warned) {
                console.error(
                    "courier: \(job.name): warning: cannot write the metrics file: \(error); the run goes on"
                )
            }
        }
    }

    /// Pushes the figures (``MetricsPush/push(_:final:)``); a failure is one warning a run.
    private func push(_ metrics: RunMetrics, _ snapshot: MetricsSnapshot, final: Bool) async {
        guard let push = metrics.push else { return }
        if let failure = await push.push(snapshot, final: final), Self.first(metrics.pushWarned) {
            console.error(
                "courier: \(job.name): warning: cannot push the metrics (--metrics-push): \(failure); the run goes on"
            )
        }
    }

    /// Whether this is the first time `flag` is set.
    private static func first(_ flag: Locked<Bool>) -> Bool {
        flag.withLock { set -> Bool in
            defer { set = true }
            return !set
        }
    }

    /// The run's pings, its start's sent (in the background), when the job has `notify`.
    func startPings(backend: Backend, run: String, log: RunLog) -> RunPings? {
        guard let notify = job.notify else { return nil }
        let pings = RunPings(
            settings: notify, job: job.name, backend: backend, tls: job.tls, http2: job.http2,
            console: console)
        let shard = options.shard.map { " (shard \($0))" } ?? ""
        let logPart = options.logToStandardOutput ? "" : "; log: \(log.writer.url.relativePath)"
        let tasks = "\(total) task\(total == 1 ? "" : "s")"
        pings.started(
            body: "courier: \(job.name)\(shard): run \(run) started, \(tasks)\(logPart)", log: log)
        return pings
    }

    /// The end's ping body when the caller gave no summary line.
    static func shortSummary(_ summary: RunSummary, job: String) -> String {
        let tasks = "\(summary.total) task\(summary.total == 1 ? "" : "s")"
        let requests = "\(summary.requests) request\(summary.requests == 1 ? "" : "s")"
        return
            "courier: \(job): \(tasks), \(summary.ok) ok, \(summary.failed) failed, \(requests); exit code \(summary.exitCode)"
    }
}
