import Courier
import Foundation

/// One request to make: a task after `foreach` expansion and templating.
///
/// Its ``Fields`` are in one box shared by copies, and copied only when a shared copy changes:
/// a task passes through the feed, the slot, the page loop and its observers, and copying a
/// few hundred bytes of fields, with a retain for each reference among them, at every step
/// gave each copy a slot of its own in the task's async frame (docs/benchmarks.md). Fields
/// read and change as the task's own (`task.id`, `task.records = nil`).
@dynamicMemberLookup
struct ExpandedTask: Sendable {
    /// What a task holds.
    struct Fields: Sendable {
        /// The task's id, unique in its job.
        var id: String

        /// The first (or only) request the task sends.
        var request: HTTPRequest

        /// Accepted statuses; `nil` means any 2xx.
        var expectStatus: Set<Int>?

        /// What the response must show besides its status.
        var expectation: Expectation = Expectation()

        /// How the task's pages follow one another; `nil` for a single request.
        var paginate: PaginationRule? = nil

        /// Where the task's cursor for the next run comes from (`since`).
        var since: SinceRule? = nil

        /// Ask for the saved output only if it changed; a 304 is then a success.
        var conditional: Bool = false

        /// Relative to the job's `outputDir`.
        var save: String?

        /// Where the task's records go (`records`), its file rendered; `nil` without, and for a
        /// task that runs only for its captures (done by an earlier run).
        var records: RecordsTarget? = nil

        /// How the task's requests are retried.
        var retry: RetryPolicy

        /// The spec's JSON path (`tasks[3]`), for messages.
        var specPath: String

        /// Where the task comes from: its spec's place in the job's `tasks`, or `nil` for a
        /// request rebuilt from a log alone (`replay` without `--job`), which has no spec.
        var specIndex: Int? = nil

        /// For a replay: the logged request this one re-sends.
        var replayOf: ReplayOrigin? = nil

        /// For a paced replay: seconds after the run's start at which to send.
        var sendAt: TimeInterval? = nil

        /// The variables the task's `auth` was rendered with, kept when its token can be renewed
        /// (``TaskSpec/refreshableToken``) so that the credentials can be rendered again.
        var authBindings: [String: String]? = nil

        /// The OAuth2 client whose access token the task sends, asked for when it is sent
        /// (``TaskSpec/oauth2(in:)``).
        var oauth2: OAuth2Configuration? = nil

        /// The end of the window a `window` task fetches: its cursor once it ended `ok`, so
        /// that later runs leave the window out.
        var windowEnd: String? = nil

        /// For a request rebuilt from a log alone: its line said `safe` (a POST that reads),
        /// so it is no write, as its spec said when it was logged.
        var loggedSafe: Bool = false

        /// For a request rebuilt from a log alone: the header its logged idempotency key went
        /// in, so that the replay's lines carry the key too (``WriteHistory`` knows a keyed
        /// write by it; trial AAA: a replay's unkeyed lines made a later night's answer stand
        /// for the write, which a repair then never sent, or sent twice).
        var loggedKeyHeader: String? = nil

        /// A write's request digest (``RequestDigest``, its first 128 bits in hex): what its log
        /// lines say it sent (`requestDigest`), so that a repair knows the same write under
        /// another task id (a task renamed since the night it repairs). `nil` for a task that
        /// is no write; for a request rebuilt from a log alone, its line's.
        var writeDigest: String? = nil
    }

    /// The fields, in one box shared by copies (``CopyOnWrite``).
    private var fields: CopyOnWrite<Fields>

    init(_ fields: Fields) { self.fields = CopyOnWrite(fields) }

    subscript<Value>(dynamicMember path: KeyPath<Fields, Value>) -> Value {
        fields.value[keyPath: path]
    }

    subscript<Value>(dynamicMember path: WritableKeyPath<Fields, Value>) -> Value {
        get { fields.value[keyPath: path] }
        set { fields.value[keyPath: path] = newValue }
    }

    /// A field of the task's spec, read in place; `nil` for a request rebuilt from a log alone
    /// (no spec). In place because copying the whole spec to look at one field retained and
    /// released each of its parts, per task.
    @inline(__always)
    private func specField<Value>(in job: Job, _ field: (TaskSpec) -> Value) -> Value? {
        guard let specIndex = self.specIndex, job.tasks.indices.contains(specIndex) else {
            return nil
        }
        return field(job.tasks[specIndex])
    }

    /// The captures of the task's spec (none for a task of no spec).
    func captures(in job: Job) -> [CaptureRule] { specField(in: job) { $0.captures } ?? [] }

    /// The `onResponse` rules of the task's spec.
    func responseRules(in job: Job) -> [ResponseRule] {
        specField(in: job) { $0.responseRules } ?? []
    }

    /// The header the task's spec sends its idempotency key in (for a request rebuilt from a
    /// log alone, the one its logged key went in).
    func keyHeader(in job: Job) -> String? {
        specField(in: job) { $0.writes.keyHeader } ?? self.loggedKeyHeader
    }

    /// Whether the task's spec is a write (``TaskSpec/isWrite``); for a request rebuilt from a
    /// log alone, `false` when its line said `safe`, else `nil` (its method decides).
    func isWrite(in job: Job) -> Bool? {
        specField(in: job) { $0.isWrite } ?? (self.loggedSafe ? false : nil)
    }

    /// The task's spec in `job`.
    func spec(in job: Job) -> TaskSpec? { specField(in: job) { $0 } }

    /// Whether `status` meets the task's expectation.
    func accepts(_ status: Int) -> Bool {
        if self.conditional, status == 304 { return true }
        return self.expectStatus?.contains(status) ?? (200..<300).contains(status)
    }
}

extension ExpandedTask {
    /// Where page `page` of the task is saved (`{page}` rendered), relative to `outputDir`;
    /// the task's `save` as it is without a page.
    func savePath(page: Int?) -> String? {
        guard let save = self.save, let page else { return self.save }
        return save.replacingOccurrences(of: "{page}", with: String(page))
    }
}

/// The run and task a replayed request came from (the log's `replayOf`).
struct ReplayOrigin: Sendable, Hashable {
    var run: String
    var task: String
}
