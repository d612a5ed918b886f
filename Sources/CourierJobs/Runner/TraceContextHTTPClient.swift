import Courier

/// The layer under a task's retries that gives each request attempt its span: a new span id,
/// sent as `traceparent` (with the caller's `tracestate`) on the attempt and every redirect hop
/// of it, so that the server's spans are children of the attempt's. The log's
/// `requestHeaders` keep the header as it went out, and the OTLP export of the log reads each
/// attempt's span id from it: the spans the server joined are the spans exported.
///
/// A `traceparent` or `tracestate` the request already carries (a replayed log's) is replaced:
/// it named an earlier attempt's span.
struct TraceContextHTTPClient: HTTPClient {
    let wrapped: AnyHTTPClient
    let trace: TraceSettings

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.headers["traceparent"] = trace.traceparent(span: TraceContext.newSpanID())
        request.headers["tracestate"] = trace.state
        return try await wrapped.perform(request)
    }
}
