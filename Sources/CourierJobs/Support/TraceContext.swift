import Courier
import Foundation

/// A W3C Trace Context `traceparent` value: `00-<trace id>-<parent id>-<flags>`, lowercase hex
/// (https://www.w3.org/TR/trace-context/#traceparent-header).
struct TraceContext: Sendable, Equatable {
    /// 16 bytes as 32 hex digits, not all zero.
    var traceID: String
    /// The span the receiver's span is a child of: 8 bytes as 16 hex digits, not all zero.
    var spanID: String
    /// `01` when sampled.
    var flags: String

    init(traceID: String, spanID: String, flags: String = "01") {
        self.traceID = traceID
        self.spanID = spanID
        self.flags = flags
    }

    /// Parses a `traceparent` as the specification says a receiver does: version `ff` and
    /// all-zero ids are invalid; a later version than `00` is read for its first four fields
    /// (what follows them must start with `-`).
    init?(traceparent text: String) {
        let bytes = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        guard bytes.count >= 55 else { return nil }
        let version = String(decoding: bytes[0..<2], as: UTF8.self)
        guard Self.isHex(version, count: 2), version != "ff",
            version == "00"
                ? bytes.count == 55 : (bytes.count == 55 || bytes[55] == UInt8(ascii: "-")),
            bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"),
            bytes[52] == UInt8(ascii: "-")
        else { return nil }
        let trace = String(decoding: bytes[3..<35], as: UTF8.self)
        let span = String(decoding: bytes[36..<52], as: UTF8.self)
        let flags = String(decoding: bytes[53..<55], as: UTF8.self)
        guard Self.isHex(trace, count: 32), Self.isHex(span, count: 16),
            Self.isHex(flags, count: 2), trace.contains(where: { $0 != "0" }),
            span.contains(where: { $0 != "0" })
        else { return nil }
        self.init(traceID: trace, spanID: span, flags: flags)
    }

    /// The header's value, version `00`.
    var traceparent: String { "00-\(traceID)-\(spanID)-\(flags)" }

    /// A new trace id: 16 random bytes, as the specification asks of a new trace.
    static func newTraceID() -> String { randomHex(bytes: 16) }

    /// A new span id: 8 random bytes.
    static func newSpanID() -> String { randomHex(bytes: 8) }

    private static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // All zero is invalid; 1 in 2^64 at worst, but never sent.
            if bytes.contains(where: { $0 != 0 }) {
                return bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            }
        }
    }

    private static func isHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count
            && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Whether `text` may be sent as `tracestate`: at most 512 characters of visible ASCII,
    /// spaces and tabs (the list's own syntax is the vendors', passed through as given).
    static func isTraceState(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 512
            && text.utf8.allSatisfy { $0 == 0x09 || (0x20...0x7E).contains($0) }
    }
}

/// What a run does with trace context: its trace (the caller's, from `TRACEPARENT`, or a new
/// one), whether each request carries `traceparent` (the job's `"trace": true` or `--trace`),
/// and the caller's `tracestate`, passed through. The run's log records the trace in
/// `run.start`, so that an OTLP export of the log puts the run and its requests in it.
struct TraceSettings: Sendable, Equatable {
    var traceID: String
    /// The caller's span (`TRACEPARENT`'s parent id): the run's span is its child.
    var parentSpanID: String?
    var flags: String
    /// `TRACESTATE`, sent beside `traceparent` as given.
    var state: String?
    /// Whether each request attempt carries `traceparent` (and `tracestate`).
    var propagates: Bool

    /// The run's settings: `nil` when trace context was neither asked for nor given by the
    /// caller, and the run's trace is not `exported`. `TRACEPARENT` that does not parse is
    /// ignored, as receivers do, with the reason.
    static func resolve(asked: Bool, exported: Bool = false, environment: [String: String]) -> (
        settings: TraceSettings?, warning: String?
    ) {
        var warning: String?
        var parent: TraceContext?
        if let text = environment["TRACEPARENT"], !text.isEmpty {
            parent = TraceContext(traceparent: text)
            if parent == nil {
                warning =
                    "TRACEPARENT is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>); the run starts a trace of its own"
            }
        }
        guard asked || exported || parent != nil else { return (nil, warning) }
        var state = environment["TRACESTATE"]
        if let text = state, !TraceContext.isTraceState(text) {
            state = nil
            warning =
                (warning.map { $0 + "; " } ?? "")
                + "TRACESTATE is not a tracestate value (at most 512 visible characters); not sent"
        }
        let settings = TraceSettings(
            traceID: parent?.traceID ?? TraceContext.newTraceID(), parentSpanID: parent?.spanID,
            flags: parent?.flags ?? "01", state: parent == nil ? nil : state, propagates: asked)
        return (settings, warning)
    }

    /// A request attempt's `traceparent`: this trace, the attempt's span as parent.
    func traceparent(span: String) -> String {
        TraceContext(traceID: traceID, spanID: span, flags: flags).traceparent
    }
}
