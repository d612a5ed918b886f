import Courier
import Foundation

/// A validated job file (version 1): what to fetch, how politely, and where results go.
/// `docs/job-file.md` is the user's reference; `JobDecoder` builds this from JSON.
struct Job: Sendable {
    var name: String
    var baseURL: URL?
    var backend: Backend
    var concurrency: Int
    var rateLimit: RateLimitSettings?
    var timeout: TimeInterval
    var retry: RetryPolicy
    var headers: [(name: String, value: String)]
    var auth: Authentication?
    /// Tokens from an OAuth2 token endpoint (`auth.oauth2`), instead of `auth`.
    var oauth2: OAuth2Configuration? = nil
    /// Keep cookies across the run's requests (`"cookies": true`); the jar lives for one run.
    var cookies: Bool
    /// The largest response body a task holds in memory (`"maxBodyBytes"`); a larger one fails
    /// the attempt with `bodyTooLarge`. Bodies streamed to a `save` file have no cap.
    var maxBodyBytes = Job.defaultMaxBodyBytes
    static let defaultMaxBodyBytes = 256 << 20
    /// Offer HTTP/2 and multiplex a host's requests over one connection (`"http2": true`,
    /// curl only; HTTP/2 is negotiated over TLS, so plain `http://` stays HTTP/1.1).
    var http2 = false
    /// Send W3C trace context (`traceparent`) on every request (`"trace": true`), so that the
    /// servers' spans join the run's trace (docs/cli.md, "Traces for OpenTelemetry").
    var trace = false
    /// `run --base-url`, which stands for the file's `baseURL`: a repair line must name it
    /// too, or the resume goes to the file's server (trial NN).
    var baseURLOverride: String? = nil
    /// Whom to trust and who we are on TLS connections (`"tls"`), for every request.
    var tls = TLSOptions()
    /// Keep to what each host asks (`"hostThrottle"`, on by default): a `Retry-After` pauses
    /// every request to its host, `RateLimit-*` quotas are spread until their reset, and 429s
    /// halve the host's rate (``HostThrottlingHTTPClient``).
    var hostThrottle = true
    /// `"hostThrottle": "shared"`: each host's pause and quota are shared with every courier
    /// process of the user (shards, other jobs, replays) through ``HostBudgetStore``.
    var sharedHosts = false
    /// Seconds after which the whole run stops as on SIGTERM (`"deadline"`; `--deadline`
    /// overrides it): no new task starts, those in flight have the grace period.
    var deadline: TimeInterval? = nil
    /// Where the run pings when it starts and ends (`notify`, or `courier run --ping-url`).
    var notify: NotifySettings? = nil
    /// `checks`: what the run's data must show for it to succeed (``DataChecks``).
    var checks = DataChecks()
    /// Folder that `save` paths are relative to, as seen from the working folder: the job's
    /// `outputDir` taken from its ``home``.
    var outputDir: String
    /// The job file's folder, which its relative paths and default log folder are taken from.
    var home = JobHome.workingFolder
    /// The job file and its log folder, relative to ``outputDir``, when they lie under it: no
    /// output may be written there (``OwnFiles``).
    var ownFiles: [String] = []
    /// `outputDir` as the job file wrote it (or its default), before ``home`` resolved it: where
    /// a run from the working folder kept the outputs before jobs had homes.
    var writtenOutputDir: String? = nil
    var tasks: [TaskSpec]
    /// The job file as read, with its SHA-256, for the log.
    var file: URL
    var sha256: String
    /// Every value that came from `${env:…}`, and the auth secrets: never logged.
    var secrets: Set<String>
    /// What reading the file found likely mistaken without stopping the job (a shell's
    /// `${NAME}` sent as text): `validate` says it, and `run` on a terminal.
    var notes: [JobFileError] = []
    /// The secret references (`${env:NAME}`, `${file:PATH}`) whose value is empty: sent as
    /// nothing, which `run` warns of, on a terminal or not.
    var emptySecrets: [String] = []
}

extension Job {
    /// What the job asks of its transport that only curl does (`http2`, `tls`), in words: a
    /// run or replay whose `--backend urlsession` overrides the job's backend is refused
    /// with it before anything is sent (the decoder refuses it in the job's own `backend`).
    var curlOnlySettings: String? {
        if http2 { return "HTTP/2" }
        if !tls.isDefault { return "TLS options (\(tls.setOptionNames.joined(separator: ", ")))" }
        return nil
    }

    /// Why `backend`, given on the command line over the job's own, cannot run this job, in
    /// words; `nil` when it can. Run and replay refuse with it before anything is sent.
    func backendRefusal(_ backend: Backend?) -> String? {
        guard backend == .urlsession, let asked = curlOnlySettings else { return nil }
        return
            "--backend urlsession: the job asks for \(asked), which the urlsession backend cannot do"
    }
}

/// `rateLimit` of a job.
struct RateLimitSettings: Sendable, Hashable {
    var perSecond: Double
    var burst: Int
    var scope: RateLimitScope
    /// The limit is the whole job's across `--shard`s: each of N shards takes an Nth of it.
    var shared = false

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
struct TaskSpec: Sendable {
    enum Target: Sendable {
        case path(String)
        case url(String)
    }

    enum Body: Sendable {
        case json(JSONNode)
        case text(String)
        case file(URL)
    }

    var id: String
    var method: HTTPMethod
    var target: Target
    var query: [(name: String, value: String)]
    var headers: [(name: String, value: String)]
    var body: Body?
    /// Accepted statuses; `nil` means any 2xx.
    var expectStatus: Set<Int>?
    /// What the response must show besides its status.
    var expectation = Expectation()
    /// How the task's pages follow one another; `nil` for a single request.
    var paginate: PaginationRule? = nil
    /// A cursor kept between runs and offered as `{since}`; `nil` for most tasks.
    var since: SinceRule? = nil
    /// The time windows the task walks (`window`); `nil` for most tasks. Its windows are the
    /// `foreach` variables ``WindowRule/startVariable`` and ``WindowRule/endVariable``.
    var window: WindowRule? = nil
    /// What to do with saved files whose item the parent no longer lists (`prune`).
    var prune: PruneMode? = nil
    /// Ask for the saved output only if it changed (`If-None-Match`/`If-Modified-Since`).
    var conditional = false
    var save: String?
    /// `records`: the items of each response, written as JSON lines into a file.
    var records: RecordsRule? = nil
    var foreach: [(name: String, source: ForeachSource)]
    /// `"zip": true`: the variables advance together (the i-th value of each), instead of
    /// every combination.
    var zip = false
    var retry: RetryPolicy
    var timeout: TimeInterval
    /// The JSON path of this task, `tasks[3]`, for messages.
    var path: String
    /// Where the task's entry starts in the job file (line, column), for the messages of
    /// checks made after decoding; `nil` for a spec not read from a file.
    var position: (line: Int, column: Int)? = nil
    /// `capture`: values this task's responses hand to later tasks.
    var captures: [CaptureRule] = []
    /// `onResponse` (the task's, else the job's): responses that mean something else than
    /// their status says.
    var responseRules: [ResponseRule] = []
    /// The task's own `checks` (`minRecords`), judged over its entry's tasks.
    var checks = DataChecks()
    /// `idempotencyKey` and `safe`: whether the task is a write, and its key's header.
    var writes = WriteSettings()
    /// The task's own `auth` (its strings are templates: `{"bearer": "{token}"}`); it replaces
    /// the job's.
    var auth: Authentication? = nil
    /// The task's own `auth.oauth2`, instead of `auth`: it replaces the job's credentials too.
    var oauth2: OAuth2Configuration? = nil
    /// Captures used as `{name}`: the task waits until their tasks are done and each has one
    /// value.
    var inputs: Set<String> = []
    /// The capture this task's `auth` takes its token from, when a rejected token can be
    /// renewed: the task that captures it is a single request (no `foreach`, `paginate` or
    /// inputs of its own), so it can be sent again for a fresh value (see ``CapturedToken``).
    var refreshableToken: String? = nil
    /// The templates above, parsed once (set by the decoder; built on demand otherwise).
    var compiled: CompiledTemplates?
    /// `{name}` uses that are not `foreach` variables, for the job to resolve against captures.
    var unresolved: [(name: String, key: String, node: JSONNode)] = []

    /// The capture that feeds a `foreach` variable, if one does.
    var captureSource: (variable: String, capture: String)? {
        for variable in foreach {
            if case .capture(let name) = variable.source { return (variable.name, name) }
        }
        return nil
    }

    /// Whether the task hands values on to other tasks.
    var hasCaptures: Bool { !captures.isEmpty }

    /// Whether the task waits for other tasks' captures.
    var isDependent: Bool { !inputs.isEmpty || captureSource != nil }

    /// The OAuth2 client whose tokens the task sends: its own `auth.oauth2`, or the job's when
    /// the task has no `auth` of its own.
    func oauth2(in job: Job) -> OAuth2Configuration? {
        oauth2 ?? (auth == nil ? job.oauth2 : nil)
    }
}

/// Where the values of one `foreach` variable come from.
/// `prune`: list the saved files of items gone upstream, or move them aside too.
enum PruneMode: String, Sendable {
    case list, move
}

enum ForeachSource: Sendable {
    case list([String])
    /// Inclusive bounds.
    case range(Int, Int)
    /// One value per non-empty line, read lazily.
    case lines(URL)
    /// The values another task captures, as they arrive (`{"capture": "userIds"}`).
    case capture(String)
}
