import Courier

/// How a write's `request.start` line is written just before the request goes to the
/// transport (``RunLog/requestStart(task:request:page:keyHeader:)``), below the host's gate,
/// the rate limit and the redirects: a run killed while a write waits for its turn has not
/// sent it, and its history must not say that its outcome is unknown.
///
/// The stack below a task's ``AttemptLoop`` is the run's, shared by every task, so the task's
/// recorder reaches the bottom layer as a task-local the loop binds around its attempts.
enum WriteStarts {
    /// What the attempt under way does just before its request (each redirect hop's too)
    /// goes to the transport. (A class, not a closure: a task-local of an optional function
    /// type crashed the optimized build in `swift_task_localValuePush`, Swift 6.3.1.)
    @TaskLocal static var current: Recorder?

    /// A write task's recorder of its `request.start` lines.
    final class Recorder: Sendable {
        let record: @Sendable (HTTPRequest) -> Void

        init(_ record: @escaping @Sendable (HTTPRequest) -> Void) { self.record = record }
    }
}

/// The layer right above the transport: tells the attempt's recorder, when one is bound, that
/// its request goes out now.
struct WriteStartAnnouncer: HTTPClient {
    let wrapped: AnyHTTPClient

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        WriteStarts.current?.record(request)
        return try await wrapped.perform(request)
    }
}
