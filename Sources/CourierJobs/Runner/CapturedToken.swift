import Courier

/// A token a login task captured, as a ``TokenProvider``: the job runner's tasks whose `auth`
/// uses it go through ``AuthenticatingHTTPClient`` with it, so that a 401 sends the login task
/// again, once for every task rejected with the same token (single flight), and resends the
/// rejected request with the new value.
///
/// A server that rejects every token cannot make a run log in over and over: the token is
/// renewed at most ``maximumRenewals`` times a run, after which rejections are failures.
final class CapturedToken: TokenProvider {
    /// Renewals allowed in one run, for one capture.
    static let maximumRenewals = 10

    /// Why no token could be had.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    let name: String
    private let feed: TaskFeed
    /// Sends the login task again and returns the value it captured (it also hands it to the
    /// feed, and writes the request's log line).
    private let renew: @Sendable () async throws -> String
    private let state = Locked(State())

    private struct State {
        var renewals = 0
        var renewing: (rejected: String, task: Task<String, any Error>)?
    }

    init(name: String, feed: TaskFeed, renew: @escaping @Sendable () async throws -> String) {
        self.name = name
        self.feed = feed
        self.renew = renew
    }

    func currentToken() async throws -> String {
        guard let value = feed.currentValue(of: name) else {
            throw Unavailable(description: "capture \"\(name)\" holds no value")
        }
        return value
    }

    func refreshToken(rejected: String) async throws -> String {
        enum Step {
            case use(String)
            case wait(Task<String, any Error>)
            case fail(String)
        }
        let step = state.withLock { state -> Step in
            if let current = feed.currentValue(of: name), current != rejected {
                return .use(current)  // renewed already, by a task rejected before this one
            }
            if let renewing = state.renewing, renewing.rejected == rejected {
                return .wait(renewing.task)
            }
            guard state.renewals < Self.maximumRenewals else {
                return .fail(
                    "capture \"\(name)\" was renewed \(Self.maximumRenewals) times in this run; the server keeps rejecting it"
                )
            }
            state.renewals += 1
            let task = Task { [renew] in try await renew() }
            state.renewing = (rejected, task)
            return .wait(task)
        }
        switch step {
        case .use(let value):
            return value
        case .fail(let message):
            throw Unavailable(description: message)
        case .wait(let task):
            // A failed renewal stays in `renewing`: every later task rejected with the same
            // token fails with its error instead of logging in again.
            return try await task.value
        }
    }
}
