import Courier
import Foundation

/// A validated job file (version 1): what to fetch, how politely, and where results go.
/// `docs/job-file.md` is the user's reference; `JobDecoder` builds this from JSON.
public struct Job: Sendable {
    public var name: String
    public var baseURL: URL?
    public var backend: Backend
    public var concurrency: Int
    public var rateLimit: RateLimitSettings?
    public var timeout: TimeInterval
    public var retry: RetryPolicy
    public var headers: [(name: String, value: String)]
    public var auth: Authentication?
    /// Keep cookies across the run's requests (`"cookies": true`); the jar lives for one run.
    public var cookies: Bool
    /// The largest response body a task holds in memory (`"maxBodyBytes"`); a larger one fails
    /// the attempt with `bodyTooLarge`. Bodies streamed to a `save` file have no cap.
    public var maxBodyBytes = Job.defaultMaxBodyBytes
    public static let defaultMaxBodyBytes = 256 << 20
    /// Folder that `save` paths are relative to (relative to the working directory).
    public var outputDir: String
    public var tasks: [TaskSpec]
    /// The job file as read, with its SHA-256, for the log.
    public var file: URL
    public var sha256: String
    /// Every value that came from `${env:…}`, and the auth secrets: never logged.
    public var secrets: Set<String>
}

/// `rateLimit` of a job.
public struct RateLimitSettings: Sendable, Hashable {
    public var perSecond: Double
    public var burst: Int
    public var scope: RateLimitScope
    /// The limit is the whole job's across `--shard`s: each of N shards takes an Nth of it.
    public var shared = false

    /// The limit one shard applies: an Nth of the rate and burst (at least one token) when
    /// the limit is shared, the whole of it otherwise.
    func share(for shard: Shard?) -> RateLimitSettings {
        guard shared, let count = shard?.count, count > 1 else { return self }
        var share = self
        share.perSecond = perSecond / Double(count)
        share.burst = max(1, Int((Double(burst) / Double(count)).rounded(.up)))
        return share
    }
}

/// One entry of `tasks`, before `foreach` expansion. String fields are templates that may hold
/// `{variable}` references.
public struct TaskSpec: Sendable {
    public enum Target: Sendable {
        case path(String)
        case url(String)
    }

    public enum Body: Sendable {
        case json(JSONNode)
        case text(String)
        case file(URL)
    }

    public var id: String
    public var method: HTTPMethod
    public var target: Target
    public var query: [(name: String, value: String)]
    public var headers: [(name: String, value: String)]
    public var body: Body?
    /// Accepted statuses; `nil` means any 2xx.
    public var expectStatus: Set<Int>?
    /// What the response must show besides its status.
    public var expectation = Expectation()
    /// How the task's pages follow one another; `nil` for a single request.
    public var paginate: PaginationRule? = nil
    /// Ask for the saved output only if it changed (`If-None-Match`/`If-Modified-Since`).
    public var conditional = false
    public var save: String?
    public var foreach: [(name: String, source: ForeachSource)]
    /// `"zip": true`: the variables advance together (the i-th value of each), instead of
    /// every combination.
    public var zip = false
    public var retry: RetryPolicy
    public var timeout: TimeInterval
    /// The JSON path of this task, `tasks[3]`, for messages.
    public var path: String
    /// `capture`: values this task's responses hand to later tasks.
    public var captures: [CaptureRule] = []
    /// The task's own `auth` (its strings are templates: `{"bearer": "{token}"}`); it replaces
    /// the job's.
    public var auth: Authentication? = nil
    /// Captures used as `{name}`: the task waits until their tasks are done and each has one
    /// value.
    public var inputs: Set<String> = []
    /// The capture this task's `auth` takes its token from, when a rejected token can be
    /// renewed: the task that captures it is a single request (no `foreach`, `paginate` or
    /// inputs of its own), so it can be sent again for a fresh value (see ``CapturedToken``).
    public var refreshableToken: String? = nil
    /// The templates above, parsed once (set by the decoder; built on demand otherwise).
    var compiled: CompiledTemplates?
    /// `{name}` uses that are not `foreach` variables, for the job to resolve against captures.
    var unresolved: [(name: String, key: String, node: JSONNode)] = []

    /// The capture that feeds a `foreach` variable, if one does.
    public var captureSource: (variable: String, capture: String)? {
        for variable in foreach {
            if case .capture(let name) = variable.source { return (variable.name, name) }
        }
        return nil
    }

    /// Whether the task hands values on to other tasks.
    public var hasCaptures: Bool { !captures.isEmpty }

    /// Whether the task waits for other tasks' captures.
    public var isDependent: Bool { !inputs.isEmpty || captureSource != nil }
}

/// Where the values of one `foreach` variable come from.
public enum ForeachSource: Sendable {
    case list([String])
    /// Inclusive bounds.
    case range(Int, Int)
    /// One value per non-empty line, read lazily.
    case lines(URL)
    /// The values another task captures, as they arrive (`{"capture": "userIds"}`).
    case capture(String)
}
