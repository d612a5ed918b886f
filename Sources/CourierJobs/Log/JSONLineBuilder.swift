import Courier
import Foundation

/// Builds one JSON object, field by field, straight into bytes: the request line of the log is
/// written once per attempt, and building a tree of ``JSONWriter/Value``s first cost as much as
/// writing it.
struct JSONLineBuilder {
    private(set) var bytes: [UInt8]
    private var needsComma = false

    init() {
        // Reserved before the first byte: a one-byte array, then grown, was two allocations.
        bytes = []
        bytes.reserveCapacity(1024)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The finished object.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The finished object and the newline that ends it as a log line.
    mutating func finishLine() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0x0A)
        return bytes
    }

    mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        JSONWriter.append(name, to: &bytes)
        // Single appends, not an array literal: that would allocate once per key.
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// Opens a nested object; its fields follow, then ``endObject()``.
    mutating func beginObject(_ name: StaticString) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        JSONWriter.writeString(value, to: &bytes)
    }

    mutating func int(_ name: StaticString, _ value: Int) {
        key(name)
        JSONWriter.writeInteger(value, to: &bytes)
    }

    /// A number of milliseconds, or `null`.
    mutating func milliseconds(_ name: StaticString, _ seconds: Double?) {
        key(name)
        if let seconds {
            JSONWriter.writeDouble(seconds * 1000, to: &bytes)
        } else {
            JSONWriter.append("null", to: &bytes)
        }
    }

    /// An RFC 3339 timestamp (``Timestamp``), written straight into the line.
    mutating func timestamp(_ name: StaticString, _ date: Date) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        Timestamp.appendRFC3339(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func value(_ name: StaticString, _ value: JSONWriter.Value) {
        key(name)
        JSONWriter.write(value, to: &bytes)
    }

    /// Header fields as an object, the value of each field `isSecret` names replaced by
    /// `placeholder`. (A non-escaping test, not a mapped sequence: that closure's captures were
    /// boxed on every line.)
    mutating func headers(
        _ name: StaticString, _ fields: HTTPHeaders, placeholder: String,
        isSecret: (String) -> Bool
    ) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for field in fields {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.writeString(field.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONWriter.writeString(isSecret(field.name) ? placeholder : field.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension JSONLineBuilder {
    /// The end of an attempt's line, the same in `request` and `token` lines: its `timings`, its
    /// `error` (the transport's, or why its answer failed), `outcome` and `retryInMs`.
    mutating func attemptEnd(
        _ attempt: RetryAttempt, timings: HTTPTimings, outcome: LogOutcome,
        failure: (kind: String, message: String)?, waits: AttemptWaits = AttemptWaits()
    ) {
        beginObject("timings")
        milliseconds("dnsMs", timings.dns)
        milliseconds("connectMs", timings.connect)
        milliseconds("tlsMs", timings.tls)
        milliseconds("firstByteMs", timings.firstByte)
        milliseconds("totalMs", timings.total)
        endObject()
        // What the attempt waited before it was sent (the rate limit and the host's gate),
        // and the host's part (``HostThrottles``), each only when there was one.
        if waits.total > 0 { milliseconds("blockedMs", waits.total) }
        if waits.host > 0 { milliseconds("throttledMs", waits.host) }
        if case .failure(let error) = attempt.outcome {
            beginObject("error")
            string("kind", error.kind.rawValue)
            string("message", error.message)
            endObject()
        } else if let failure {
            value(
                "error",
                .object([("kind", .string(failure.kind)), ("message", .string(failure.message))]))
        }
        string("outcome", outcome.rawValue)
        if let delay = attempt.retryDelay { milliseconds("retryInMs", delay) }
    }
}
