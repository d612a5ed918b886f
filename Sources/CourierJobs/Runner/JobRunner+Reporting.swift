import Courier
import Foundation

/// What a run tells the world outside its log: its metrics file (`--metrics-file`) and its
/// dead man's switch pings (`notify`). Neither changes the run's exit code; a failure of
/// either is one warning on stderr.
extension JobRunner {
    /// A run's metrics file and the figures its log lines add to.
    struct RunMetrics: Sendable {
        let file: MetricsFile
        let figures = RequestFigures()
        /// Set once a write failed and said so: one warning per run.
        let warned = Locked(false)
        /// Set by the last write, under the lock every write holds: a tick whose figures were
        /// taken before the end cannot land after it (a loaded machine once renamed a tick's
        /// file of zeros over the final one).
        let finished = Locked(false)

        /// Takes the figures and writes them, unless the final figures are written already;
        /// `final` makes this write the last. Figures and file are taken and written under one
        /// lock, so the file ends with the final figures whatever a tick was doing. Returns
        /// the write's failure.
        func write(final: Bool, _ snapshot: () -> MetricsSnapshot) -> FileError? {
            finished.withLock { finished -> FileError? in
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
    /// job's lock is held.
    func startMetrics(_ settings: MetricsSettings) -> RunMetrics {
        RunMetrics(file: MetricsFile(settings: settings, job: job.name, shard: options.shard))
    }

    /// Writes the file now, then every ``MetricsSettings/interval`` until cancelled.
    func tickMetrics(_ metrics: RunMetrics, progress: Progress, started: Date) -> Task<Void, Never>
    {
        Task {
            while !Task.isCancelled {
                write(metrics, final: false) {
                    let counts = progress.snapshot
                    return MetricsSnapshot(
                        started: started, duration: time.date().timeIntervalSince(started),
                        tasksOK: counts.ok, tasksFailed: counts.failed, tasksPlanned: counts.total,
                        requests: metrics.figures.snapshot)
                }
                try? await time.sleep(for: .seconds(metrics.file.settings.interval))
            }
        }
    }

    /// The last write: the run's counts as `run.end` has them, and its exit code.
    func finishMetrics(_ metrics: RunMetrics, summary: RunSummary, started: Date) {
        write(metrics, final: true) {
            MetricsSnapshot(
                started: started, duration: summary.duration, tasksOK: summary.ok,
                tasksFailed: summary.failed, tasksPlanned: summary.total,
                requests: metrics.figures.snapshot, exitCode: summary.exitCode,
                ended: started.addingTimeInterval(summary.duration))
        }
    }

    /// Writes the figures (``RunMetrics/write(final:_:)``); a failure is one warning a run.
    private func write(_ metrics: RunMetrics, final: Bool, _ snapshot: () -> MetricsSnapshot) {
        if let error = metrics.write(final: final, snapshot) {
            let first = metrics.warned.withLock { warned -> Bool in
                defer { warned = true }
                return !warned
            }
            if first {
                console.error(
                    "courier: \(job.name): warning: cannot write the metrics file: \(error); the run goes on"
                )
            }
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
