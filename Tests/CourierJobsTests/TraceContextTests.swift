import Foundation
import Testing

@testable import CourierJobs

/// W3C `traceparent` read as the specification's receivers read it, the run's trace settings
/// from the environment, and the OTLP exporter's variables as other OpenTelemetry tools read
/// them.
@Suite("trace context")
struct TraceContextTests {
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let span = "00f067aa0ba902b7"

    @Test("a traceparent parses; what the specification calls invalid does not")
    func parsing() throws {
        let parsed = try #require(TraceContext(traceparent: "00-\(Self.trace)-\(Self.span)-01"))
        #expect(parsed.traceID == Self.trace && parsed.spanID == Self.span && parsed.flags == "01")
        #expect(parsed.traceparent == "00-\(Self.trace)-\(Self.span)-01")
        // A later version is read for its first four fields.
        #expect(TraceContext(traceparent: "cc-\(Self.trace)-\(Self.span)-01-what-follows") != nil)
        for bad in [
            "00-\(Self.trace.uppercased())-\(Self.span)-01",  // hex is lowercase
            "00-\(String(repeating: "0", count: 32))-\(Self.span)-01",  // no trace
            "00-\(Self.trace)-0000000000000000-01",  // no parent
            "ff-\(Self.trace)-\(Self.span)-01",  // version ff
            "00-\(Self.trace)-\(Self.span)-01-x",  // version 00 has four fields
            "cc-\(Self.trace)-\(Self.span)-01x",
            "00-\(Self.trace)-\(Self.span)-1",
            "00-\(Self.trace.dropLast())g-\(Self.span)-01",
            "",
        ] {
            #expect(TraceContext(traceparent: bad) == nil, "\(bad)")
        }
        let made = TraceContext.newSpanID()
        #expect(made.count == 16 && made != TraceContext.newSpanID())
        #expect(TraceContext(traceparent: "00-\(TraceContext.newTraceID())-\(made)-01") != nil)
    }

    @Test("the run's trace: the caller's from TRACEPARENT, its tracestate passed; or a new one")
    func settings() throws {
        #expect(TraceSettings.resolve(asked: false, environment: [:]).settings == nil)
        let caller = [
            "TRACEPARENT": "00-\(Self.trace)-\(Self.span)-00", "TRACESTATE": "congo=t61rcWkgMzE",
        ]
        let child = try #require(TraceSettings.resolve(asked: false, environment: caller).settings)
        #expect(child.traceID == Self.trace && child.parentSpanID == Self.span)
        #expect(child.flags == "00" && child.state == "congo=t61rcWkgMzE" && !child.propagates)
        #expect(
            child.traceparent(span: "b7ad6b7169203331") == "00-\(Self.trace)-b7ad6b7169203331-00")

        let (own, warning) = TraceSettings.resolve(
            asked: true, environment: ["TRACEPARENT": "junk", "TRACESTATE": "a=b"])
        let settings = try #require(own)
        #expect(settings.propagates && settings.parentSpanID == nil && settings.flags == "01")
        #expect(settings.traceID.count == 32 && settings.traceID != Self.trace)
        #expect(settings.state == nil, "a tracestate without its traceparent means nothing")
        #expect(warning?.contains("TRACEPARENT is not a W3C traceparent") == true)
        #expect(!(warning ?? "").contains("junk"))

        let long = [
            "TRACEPARENT": caller["TRACEPARENT"]!, "TRACESTATE": String(repeating: "a", count: 513),
        ]
        let (dropped, why) = TraceSettings.resolve(asked: true, environment: long)
        #expect(dropped?.state == nil && why?.contains("TRACESTATE") == true)
        #expect(
            TraceSettings.resolve(asked: false, exported: true, environment: [:]).settings != nil)
    }

    @Test("OTLP's variables: the traces endpoint as given, a base URL with v1/traces, headers")
    func environment() {
        let base = OTLPEnvironment(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"])
        #expect(base.tracesURL?.absoluteString == "http://collector:4318/v1/traces")
        #expect(base.serviceName == "courier" && base.problems.isEmpty)
        let prefixed = OTLPEnvironment(["OTEL_EXPORTER_OTLP_ENDPOINT": "https://o.example/otlp/"])
        #expect(prefixed.tracesURL?.absoluteString == "https://o.example/otlp/v1/traces")
        let both = OTLPEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:9999/custom",
            "OTEL_SERVICE_NAME": "nightly-sync",
            "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%3Db, x-team = ops",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "X-Team=traces",
        ])
        #expect(both.tracesURL?.absoluteString == "http://traces:9999/custom")
        #expect(both.serviceName == "nightly-sync")
        #expect(both.headers.map { "\($0.name)=\($0.value)" } == ["api-key=a=b", "X-Team=traces"])
        for off in [["OTEL_SDK_DISABLED": "true"], ["OTEL_TRACES_EXPORTER": "none"]] {
            let environment = off.merging(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]) { $1 }
            #expect(OTLPEnvironment(environment).tracesURL == nil)
        }
        let bad = OTLPEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": "no-equals-sign-secret",
        ])
        #expect(bad.tracesURL == nil && bad.headers.isEmpty && bad.problems.count == 2)
        #expect(!bad.problems.joined().contains("secret"))
    }
}
