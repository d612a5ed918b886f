import Courier
import Foundation

/// `courier run`'s trace context: the run's trace (`--trace`, the job's `"trace"`,
/// `TRACEPARENT`), and its export to the OTLP endpoint of the environment once the run has
/// ended (docs/cli.md, "Trace context on every request").
extension RunCommand {
    /// The run's trace settings, or `nil` when the run has no trace: none asked for, no
    /// `TRACEPARENT`, no OTLP endpoint. A variable that cannot be used is one warning.
    static func traceSettings(asked: Bool, environment: [String: String], console: Console)
        -> TraceSettings?
    {
        let otlp = OTLPEnvironment(environment)
        let (settings, warning) = TraceSettings.resolve(
            asked: asked, exported: otlp.tracesURL != nil, environment: environment)
        for problem in otlp.problems + (warning.map { [$0] } ?? []) {
            console.error("courier: warning: \(problem)")
        }
        return settings
    }

    /// Exports the run's trace, read from its log, to the environment's OTLP endpoint, in
    /// parts of ``spansPerExport`` spans. A failure is one warning: the run's exit code is
    /// not the collector's.
    static func exportTrace(
        _ summary: RunSummary, job: Job, options: RunOptions, console: Console
    ) async {
        let environment = ProcessInfo.processInfo.environment
        let otlp = OTLPEnvironment(environment)
        guard options.trace != nil, options.offline == nil, let url = otlp.tracesURL else {
            return
        }
        guard !options.logToStandardOutput else {
            console.error(
                "courier: \(job.name): warning: the run's trace is made from its log, which went to stdout: export it from there with `courier report LOG --otlp-endpoint URL`"
            )
            return
        }
        // COURIER_OTLP_PART_SPANS makes the parts small, so that a test sees several.
        let part =
            environment["COURIER_OTLP_PART_SPANS"].flatMap(Int.init).flatMap {
                $0 > 0 ? $0 : nil
            } ?? spansPerExport
        var traces = OTLPTraces(serviceName: otlp.serviceName)
        do throws(OTLPUpload.Failure) {
            for entry in LogReader(paths: [summary.logURL.path], warn: { _ in }) {
                traces.add(entry.line)
                if traces.attemptSpans >= part {
                    try await OTLPUpload.send(
                        JSONWriter.bytes(traces.takeAttemptSpans()), to: url,
                        headers: otlp.headers)
                }
            }
            try await OTLPUpload.send(
                JSONWriter.bytes(traces.value()), to: url, headers: otlp.headers)
        } catch {
            console.error(
                "courier: \(job.name): warning: the run's trace was not exported: \(error.message)")
        }
    }

    /// Spans a part of the export holds at most: about 2 MB of OTLP/JSON, under collectors'
    /// usual 4 MiB limit on a request.
    static let spansPerExport = 2_000
}
