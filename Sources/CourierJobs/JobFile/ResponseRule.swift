import Courier
import Foundation

/// One entry of `onResponse`: a response it matches (by status, by text in the body, or both)
/// and what it means for the task, whatever the status and `expect` would say.
///
/// The rules of a task are tried in order and the first that matches decides; a response none
/// matches is judged as usual. A pure value: the retry layer asks it whether to send again
/// (``RetryPolicy/ResponseVerdict``) and the page's judgement whether the task is done.
struct ResponseRule: Sendable, Equatable {
    /// What a task's line says when a rule ignored a page after its first: its listing may
    /// have stopped early, and a cursor it keeps does not move (it would pass what the pages
    /// after it held, and later runs would never ask for them).
    static let cutNote =
        "an onResponse rule ignored this page, so its listing may have stopped early; its cursor (since, window) stays where it was (a window a run fetched whole before stays done: a backfill with --window fetches it again)"

    /// What a matching response means.
    enum Action: String, Sendable, CaseIterable {
        /// Success with nothing to keep: no save, records or captures, and no next page. A
        /// child deleted since its parent listed it (a 404) ends `ok`, counted as ignored.
        case ignore
        /// Send again, as the retry policy paces it (`maxAttempts`, backoff, `Retry-After`),
        /// whatever the status and the method: a 200 whose body says "try again later".
        case retry
        /// Fail at once, with no retry: an answer no retry can change.
        case fail
    }

    /// The statuses it matches; `nil` for any.
    var statuses: Set<Int>?
    /// Texts the body must all contain (compared as UTF-8 bytes).
    var bodyContains: [String] = []
    var action: Action
    /// Where the job file says it (`onResponse[0]`, `tasks[1].onResponse[0]`): a task's rules
    /// take the place of the job's, so an index alone did not say whose (trial HH2).
    var path = "onResponse"

    /// Whether `response` matches the rule.
    func matches(_ response: HTTPResponse) -> Bool {
        if let statuses, !statuses.contains(response.status) { return false }
        return bodyContains.allSatisfy { response.body.range(of: Data($0.utf8)) != nil }
    }

    /// The first of `rules` that `response` matches, with its place in the list.
    static func first(in rules: [ResponseRule], matching response: HTTPResponse)
        -> (index: Int, rule: ResponseRule)?
    {
        guard !rules.isEmpty else { return nil }
        for (index, rule) in rules.enumerated() where rule.matches(response) {
            return (index, rule)
        }
        return nil
    }

    /// What the retry layer makes of a response the rules match: sent again for `retry`,
    /// final for `ignore` and `fail`.
    static func verdict(_ rules: [ResponseRule], on response: HTTPResponse)
        -> RetryPolicy.ResponseVerdict?
    {
        first(in: rules, matching: response).map { $0.rule.action == .retry ? .retry : .final }
    }

    /// The failure a matching `fail` rule (or a `retry` rule still matching when the attempts
    /// ran out) gives the task, said in words: `status 403 matched onResponse[1] ("fail")`.
    func failure(status: Int, attempts: Int, stopReason: String?) -> String {
        var message = "status \(status) matched \(path) (\"\(action.rawValue)\")"
        if action == .retry {
            message += " on the last of \(attempts) attempt\(attempts == 1 ? "" : "s")"
        }
        if let stopReason { message += "; \(stopReason)" }
        return message
    }
}
