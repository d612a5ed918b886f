import Courier
import Foundation

/// The log's fields (docs/log-format.md), as the scanner reads them: each known key decoded
/// into ``LogLine/Fields``, every other value stepped over.
extension LogLineScanner {
    mutating func field(_ key: Key, into fields: inout LogLine.Fields) -> Bool {
        // Keys are told apart on their bytes, length first: making a string of each key and
        // comparing it with every name in turn was an eighth of `courier report`'s time.
        if key.is("event") { return string(into: &fields.event) }
        if key.is("ts") { return string(into: &fields.ts) }
        if key.is("run") { return string(into: &fields.run) }
        if key.is("job") { return string(into: &fields.job) }
        if key.is("task") { return string(into: &fields.task) }
        if key.is("method") { return string(into: &fields.method) }
        if key.is("url") { return string(into: &fields.url) }
        if key.is("outcome") { return string(into: &fields.outcome) }
        if key.is("backend") { return string(into: &fields.backend) }
        if key.is("attempt") { return number(into: &fields.attempt) }
        if key.is("status") { return number(into: &fields.status) }
        if key.is("requestHeaders") { return headers(into: &fields.requestHeaders) }
        if key.is("responseHeaders"), fields.keepResponseHeaders {
            return headers(into: &fields.responseHeaders)
        }
        if key.is("bytesSent") { return number(into: &fields.bytesSent) }
        if key.is("bytesReceived") { return number(into: &fields.bytesReceived) }
        if key.is("page") { return number(into: &fields.page) }
        if key.is("finalURL") { return string(into: &fields.finalURL) }
        if key.is("redirects") { return number(into: &fields.redirects) }
        if key.is("requestBody") { return requestBody(into: &fields) }
        if key.is("error") { return error(into: &fields) }
        if key.is("timings") { return timings(into: &fields) }
        if key.is("throttledMs") { return number(into: &fields.throttledMs) }
        if key.is("blockedMs") { return number(into: &fields.blockedMs) }
        if key.is("idempotencyKey") { return string(into: &fields.idempotencyKey) }
        if key.is("requestDigest") { return string(into: &fields.requestDigest) }
        if key.is("recordsKept") { return number(into: &fields.recordsKept) }
        if key.is("savedTo") { return string(into: &fields.savedTo) }
        if key.is("safe") { return bool(into: &fields.safe) }
        if key.is("notModified") { return bool(into: &fields.notModified) }
        if key.is("renewal") { return bool(into: &fields.renewal) }
        if key.is("tasks") { return tasks(into: &fields.runFields) }
        if key.is("shard") { return shard(into: &fields.runFields) }
        if key.is("trace") { return trace(into: &fields.runFields) }
        if key.is("replayFrom") { return string(into: &fields.replayFrom) }
        if key.is("jobFile") { return string(into: &fields.runFields.jobFile) }
        if key.is("jobPath") { return string(into: &fields.runFields.jobPath) }
        if key.is("logDir") { return string(into: &fields.runFields.logDir) }
        if key.is("oncePer") { return string(into: &fields.runFields.oncePer) }
        if key.is("window") { return string(into: &fields.runFields.window) }
        if key.is("baseURL") { return string(into: &fields.runFields.baseURL) }
        if key.is("fanOut") { return bool(into: &fields.runFields.fanOut) }
        if key.is("durationMs") { return number(into: &fields.runFields.durationMs) }
        if key.is("exitCode") { return number(into: &fields.runFields.exitCode) }
        if key.is("interrupted") { return bool(into: &fields.runFields.interrupted) }
        if key.is("tasksUnlisted") { return bool(into: &fields.runFields.tasksUnlisted) }
        if key.is("checks") { return checks(into: &fields.runFields.checks) }
        if key.is("recordsNotWritten") {
            return number(into: &fields.runFields.recordsNotWritten)
        }
        if key.is("replayOf") { return strings(into: &fields.replayOf) }
        if key.is("resumedFrom") { return strings(into: &fields.resumedFrom) }
        if key.is("only") { return strings(into: &fields.only) }
        return skipValue()
    }

    /// `requestHeaders`, `responseHeaders`: name and value pairs, in order.
    mutating func headers(into target: inout [(name: String, value: String)]) -> Bool {
        object { scanner, name in
            // A line written with spaces after `:` (Python's `json.dumps`) is JSON too: its
            // headers were dropped, and a replay sent a write without its key (trial K).
            scanner.skipWhitespace()
            guard let value = scanner.string() else { return scanner.skipValue() }
            target.append((name.text, value))
            return true
        }
    }

    mutating func requestBody(into fields: inout LogLine.Fields) -> Bool {
        fields.bodyPresent = true
        return object { scanner, name in
            if name.is("text") { return scanner.string(into: &fields.bodyText) }
            if name.is("base64") { return scanner.string(into: &fields.bodyBase64) }
            if name.is("omittedBytes") { return scanner.number(into: &fields.omittedBytes) }
            if name.is("sha256") { return scanner.string(into: &fields.bodySHA256) }
            if name.is("file") { return scanner.string(into: &fields.bodyFile) }
            return scanner.skipValue()
        }
    }

    mutating func error(into fields: inout LogLine.Fields) -> Bool {
        object { scanner, name in
            if name.is("kind") { return scanner.string(into: &fields.errorKind) }
            if name.is("message") { return scanner.string(into: &fields.errorMessage) }
            return scanner.skipValue()
        }
    }

    mutating func timings(into fields: inout LogLine.Fields) -> Bool {
        object { scanner, name in
            if name.is("totalMs") { return scanner.number(into: &fields.totalMs) }
            if name.is("dnsMs") { return scanner.number(into: &fields.dnsMs) }
            if name.is("connectMs") { return scanner.number(into: &fields.connectMs) }
            if name.is("tlsMs") { return scanner.number(into: &fields.tlsMs) }
            if name.is("firstByteMs") { return scanner.number(into: &fields.firstByteMs) }
            return scanner.skipValue()
        }
    }

    mutating func shard(into run: inout LogLine.RunFields) -> Bool {
        object { scanner, name in
            if name.is("index") { return scanner.number(into: &run.shardIndex) }
            if name.is("count") { return scanner.number(into: &run.shardCount) }
            return scanner.skipValue()
        }
    }

    mutating func trace(into run: inout LogLine.RunFields) -> Bool {
        object { scanner, name in
            if name.is("traceId") { return scanner.string(into: &run.traceID) }
            if name.is("parentSpanId") { return scanner.string(into: &run.parentSpanID) }
            return scanner.skipValue()
        }
    }

    /// `replayOf`, `resumedFrom`: an array of strings (a `replayOf` object, on a request
    /// line, is stepped over).
    mutating func strings(into target: inout [String]) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return skipValue() }
        var values: [String] = []
        let ok = array { scanner in
            scanner.skipWhitespace()
            guard let value = scanner.string() else { return scanner.skipValue() }
            values.append(value)
            return true
        }
        target = values
        return ok
    }

    /// `tasks`: a count in `run.start` (the planned tasks), an object in `run.end` (how they
    /// ended).
    mutating func tasks(into run: inout LogLine.RunFields) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            return number(into: &run.plannedTasks)
        }
        return object { scanner, name in
            if name.is("total") { return scanner.number(into: &run.total) }
            if name.is("ok") { return scanner.number(into: &run.ok) }
            if name.is("failed") { return scanner.number(into: &run.failed) }
            if name.is("alreadyDone") { return scanner.number(into: &run.alreadyDone) }
            if name.is("ignored") { return scanner.number(into: &run.ignored) }
            return scanner.skipValue()
        }
    }

    /// `run.end` `checks`: each failed check's `check` and `message`.
    mutating func checks(into target: inout [DataCheckVerdict.Failure]) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return skipValue() }
        var found: [DataCheckVerdict.Failure] = []
        let ok = array { scanner in
            var check: String?
            var message: String?
            let read = scanner.object { scanner, name in
                if name.is("check") { return scanner.string(into: &check) }
                if name.is("message") { return scanner.string(into: &message) }
                return scanner.skipValue()
            }
            found.append(DataCheckVerdict.Failure(check: check ?? "", message: message ?? ""))
            return read
        }
        target = found
        return ok
    }
}
