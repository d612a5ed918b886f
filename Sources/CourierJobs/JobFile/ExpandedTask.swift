import Courier
import Foundation

/// One request to make: a task after `foreach` expansion and templating.
public struct ExpandedTask: Sendable {
    public var id: String
    public var request: HTTPRequest
    /// Accepted statuses; `nil` means any 2xx.
    public var expectStatus: Set<Int>?
    /// What the response must show besides its status.
    public var expectation = Expectation()
    /// How the task's pages follow one another; `nil` for a single request.
    public var paginate: PaginationRule? = nil
    /// Ask for the saved output only if it changed; a 304 is then a success.
    public var conditional = false
    /// Relative to the job's `outputDir`.
    public var save: String?
    public var retry: RetryPolicy
    /// The spec's JSON path (`tasks[3]`), for messages.
    public var specPath: String
    /// The spec's place in the job's `tasks`.
    public var specIndex = 0
    /// For a replay: the logged request this one re-sends.
    public var replayOf: ReplayOrigin? = nil
    /// For a paced replay: seconds after the run's start at which to send.
    public var sendAt: TimeInterval? = nil
    /// The variables the task's `auth` was rendered with, kept when its token can be renewed
    /// (``TaskSpec/refreshableToken``) so that the credentials can be rendered again.
    public var authBindings: [String: String]? = nil

    /// Whether `status` meets the task's expectation.
    public func accepts(_ status: Int) -> Bool {
        if conditional, status == 304 { return true }
        return expectStatus?.contains(status) ?? (200..<300).contains(status)
    }
}

/// The run and task a replayed request came from (the log's `replayOf`).
public struct ReplayOrigin: Sendable, Hashable {
    public var run: String
    public var task: String
}
