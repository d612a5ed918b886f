import Courier

/// `courier run --json`: the run's summary as one JSON object, instead of the summary line.
/// Its fields are documented in `RunCommand.usage` and docs/cli.md; `RunJSONTests` reads them.
enum RunSummaryJSON {
    static func value(_ summary: RunSummary, job: Job, shard: Shard?, logOnStdout: Bool)
        -> JSONWriter.Value
    {
        var tasks: [(String, JSONWriter.Value)] = [
            ("total", .int(summary.total)), ("ok", .int(summary.ok)),
            ("failed", .int(summary.failed)), ("notModified", .int(summary.notModified)),
            ("ignored", .int(summary.ignored)),
            ("alreadyDone", .int(summary.alreadyDone)),
            ("writesResent", .int(summary.writesResent)), ("writesHeld", .int(summary.writesHeld)),
        ]
        tasks.append(("notRun", .int(max(0, summary.total - summary.ok - summary.failed))))
        return .object([
            ("job", .string(job.name)),
            ("shard", shard.map { .string("\($0)") } ?? .null),
            ("tasks", .object(tasks)),
            ("requests", .int(summary.requests)),
            ("durationMs", .int(Int((summary.duration * 1000).rounded()))),
            ("exitCode", .int(Int(summary.exitCode))),
            ("interrupted", .bool(summary.interruptedBy != nil)),
            ("stoppedBy", summary.stopReason.map { .string($0) } ?? .null),
            ("tasksUnlisted", .bool(summary.unlisted)),
            ("recordsNotWritten", .int(summary.recordsFailed)),
            (
                "log",
                logOnStdout || summary.logVanished ? .null : .string(summary.logURL.relativePath)
            ),
            ("logIncomplete", summary.logFailure.map { .string($0) } ?? .null),
            ("missing", summary.missing.map { .int($0) } ?? .null),
            (
                "historyWhole",
                summary.missing == nil ? .null : .bool(!summary.historyPartial)
            ),
            (
                "checksFailed",
                .array(
                    summary.checkFailures.map {
                        .object([("check", .string($0.check)), ("message", .string($0.message))])
                    })
            ),
        ])
    }
}
