import Courier
import Foundation

/// One request to make: a task after `foreach` expansion and templating.
///
/// A value with its fields in one shared box, copied only when a copy is changed: a task
/// passes through the feed, the slot, the page loop and its observers, and copying a few
/// hundred bytes of fields, with a retain for each reference among them, at every step was
/// a twentieth of `courier run`'s CPU (docs/benchmarks.md).
package struct ExpandedTask: Sendable {
    /// The fields, in one place.
    private final class Box: @unchecked Sendable {
        // Safe: a box is only changed through a task that holds its one reference
        // (``ExpandedTask/unique()``), and is read-only once shared.
        var id: String
        var request: HTTPRequest
        var expectStatus: Set<Int>?
        var expectation: Expectation
        var paginate: PaginationRule?
        var since: SinceRule?
        var conditional: Bool
        var save: String?
        var records: RecordsTarget?
        var retry: RetryPolicy
        var specPath: String
        var specIndex: Int?
        var replayOf: ReplayOrigin?
        var sendAt: TimeInterval?
        var authBindings: [String: String]?
        var oauth2: OAuth2Configuration?

        init(
            id: String,
            request: HTTPRequest,
            expectStatus: Set<Int>?,
            expectation: Expectation,
            paginate: PaginationRule?,
            since: SinceRule?,
            conditional: Bool,
            save: String?,
            records: RecordsTarget?,
            retry: RetryPolicy,
            specPath: String,
            specIndex: Int?,
            replayOf: ReplayOrigin?,
            sendAt: TimeInterval?,
            authBindings: [String: String]?,
            oauth2: OAuth2Configuration?
        ) {
            self.id = id
            self.request = request
            self.expectStatus = expectStatus
            self.expectation = expectation
            self.paginate = paginate
            self.since = since
            self.conditional = conditional
            self.save = save
            self.records = records
            self.retry = retry
            self.specPath = specPath
            self.specIndex = specIndex
            self.replayOf = replayOf
            self.sendAt = sendAt
            self.authBindings = authBindings
            self.oauth2 = oauth2
        }

        func copy() -> Box {
            Box(
                id: id,
                request: request,
                expectStatus: expectStatus,
                expectation: expectation,
                paginate: paginate,
                since: since,
                conditional: conditional,
                save: save,
                records: records,
                retry: retry,
                specPath: specPath,
                specIndex: specIndex,
                replayOf: replayOf,
                sendAt: sendAt,
                authBindings: authBindings,
                oauth2: oauth2)
        }
    }

    private var box: Box

    init(
        id: String,
        request: HTTPRequest,
        expectStatus: Set<Int>?,
        expectation: Expectation = Expectation(),
        paginate: PaginationRule? = nil,
        since: SinceRule? = nil,
        conditional: Bool = false,
        save: String?,
        records: RecordsTarget? = nil,
        retry: RetryPolicy,
        specPath: String,
        specIndex: Int? = nil,
        replayOf: ReplayOrigin? = nil,
        sendAt: TimeInterval? = nil,
        authBindings: [String: String]? = nil,
        oauth2: OAuth2Configuration? = nil
    ) {
        box = Box(
            id: id,
            request: request,
            expectStatus: expectStatus,
            expectation: expectation,
            paginate: paginate,
            since: since,
            conditional: conditional,
            save: save,
            records: records,
            retry: retry,
            specPath: specPath,
            specIndex: specIndex,
            replayOf: replayOf,
            sendAt: sendAt,
            authBindings: authBindings,
            oauth2: oauth2)
    }

    /// The box, copied first if another task shares it.
    private mutating func unique() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = box.copy() }
        return box
    }

    /// The task's id, unique in its job.
    package var id: String {
        get { box.id }
        set { unique().id = newValue }
    }

    /// The first (or only) request the task sends.
    package var request: HTTPRequest {
        get { box.request }
        set { unique().request = newValue }
    }

    /// Accepted statuses; `nil` means any 2xx.
    package var expectStatus: Set<Int>? {
        get { box.expectStatus }
        set { unique().expectStatus = newValue }
    }

    /// What the response must show besides its status.
    package var expectation: Expectation {
        get { box.expectation }
        set { unique().expectation = newValue }
    }

    /// How the task's pages follow one another; `nil` for a single request.
    package var paginate: PaginationRule? {
        get { box.paginate }
        set { unique().paginate = newValue }
    }

    /// Where the task's cursor for the next run comes from (`since`).
    package var since: SinceRule? {
        get { box.since }
        set { unique().since = newValue }
    }

    /// Ask for the saved output only if it changed; a 304 is then a success.
    package var conditional: Bool {
        get { box.conditional }
        set { unique().conditional = newValue }
    }

    /// Relative to the job's `outputDir`.
    package var save: String? {
        get { box.save }
        set { unique().save = newValue }
    }

    /// Where the task's records go (`records`), its file rendered; `nil` without, and for a
    /// task that runs only for its captures (done by an earlier run).
    package var records: RecordsTarget? {
        get { box.records }
        set { unique().records = newValue }
    }

    /// How the task's requests are retried.
    package var retry: RetryPolicy {
        get { box.retry }
        set { unique().retry = newValue }
    }

    /// The spec's JSON path (`tasks[3]`), for messages.
    package var specPath: String {
        get { box.specPath }
        set { unique().specPath = newValue }
    }

    /// Where the task comes from: its spec's place in the job's `tasks`, or `nil` for a
    /// request rebuilt from a log alone (`replay` without `--job`), which has no spec.
    package var specIndex: Int? {
        get { box.specIndex }
        set { unique().specIndex = newValue }
    }

    /// For a replay: the logged request this one re-sends.
    package var replayOf: ReplayOrigin? {
        get { box.replayOf }
        set { unique().replayOf = newValue }
    }

    /// For a paced replay: seconds after the run's start at which to send.
    package var sendAt: TimeInterval? {
        get { box.sendAt }
        set { unique().sendAt = newValue }
    }

    /// The variables the task's `auth` was rendered with, kept when its token can be renewed
    /// (``TaskSpec/refreshableToken``) so that the credentials can be rendered again.
    package var authBindings: [String: String]? {
        get { box.authBindings }
        set { unique().authBindings = newValue }
    }

    /// The OAuth2 client whose access token the task sends, asked for when it is sent
    /// (``TaskSpec/oauth2(in:)``).
    package var oauth2: OAuth2Configuration? {
        get { box.oauth2 }
        set { unique().oauth2 = newValue }
    }

    /// The task's spec in `job`, `nil` for a request rebuilt from a log alone.
    package func spec(in job: Job) -> TaskSpec? {
        guard let specIndex, job.tasks.indices.contains(specIndex) else { return nil }
        return job.tasks[specIndex]
    }

    /// Whether `status` meets the task's expectation.
    package func accepts(_ status: Int) -> Bool {
        if conditional, status == 304 { return true }
        return expectStatus?.contains(status) ?? (200..<300).contains(status)
    }
}

/// The run and task a replayed request came from (the log's `replayOf`).
package struct ReplayOrigin: Sendable, Hashable {
    package var run: String
    package var task: String
}
