/// One key of a job-file object: its JSON type, whether `{variables}` are substituted in it
/// (templated) and whether `${env:…}` is resolved in it.
///
/// ``NodeReader`` reads a key as its entry says, so whether a value resolves `${env:…}` is
/// decided here, once, not at each call.
struct JobKey: Sendable {
    /// The JSON types the decoder accepts; `any` for a value it does not check.
    enum ValueType: Sendable, Equatable {
        case string, number, integer, boolean, object, array
        /// A string or an array of strings (`expect.bodyContains`).
        case stringOrArray
        /// `true`/`false` or a word (`prune`).
        case booleanOrString
        /// `true` or a list (`records.csv`).
        case booleanOrArray
        /// `true`/`false` or an object (`idempotencyKey`).
        case booleanOrObject
        case any
    }

    enum Trait: Sendable {
        /// `{name}` is replaced by a variable or a capture when the task is expanded.
        case templated
        /// `${env:NAME}` is resolved when the file is read.
        case env
        /// A URL path: an environment value's `?` and `#` are encoded, as data
        /// (``DecodingContext/resolveEnvironment(_:path:at:template:inPath:)``).
        case urlPath
        /// A whole URL (`url`): an environment value is encoded as the part of the URL it
        /// lands in asks (``DecodingContext/urlData(_:after:wholeURL:)``).
        case wholeURL
    }

    let name: String
    let type: ValueType
    let templated: Bool
    let env: Bool
    let urlPath: Bool
    let wholeURL: Bool

    init(_ name: String, _ type: ValueType, _ traits: Trait...) {
        self.init(name, type, traits)
    }

    init(_ name: String, _ type: ValueType, _ traits: [Trait]) {
        self.name = name
        self.type = type
        templated = traits.contains { if case .templated = $0 { true } else { false } }
        env = traits.contains { if case .env = $0 { true } else { false } }
        urlPath = traits.contains { if case .urlPath = $0 { true } else { false } }
        wholeURL = traits.contains { if case .wholeURL = $0 { true } else { false } }
    }
}

/// The keys of one object of a job file, in the order unknown-key messages list them.
struct JobObjectKeys: Sendable {
    /// How messages and tests name it: `task`, `task.paginate.next.cursor`…
    let name: String
    /// Where `jobs/schema.json` describes it (a JSON Pointer; `$ref`s and `oneOf`s are followed).
    let schema: String
    let keys: [JobKey]

    var names: [String] { keys.map(\.name) }

    func contains(_ key: String) -> Bool { keys.contains { $0.name == key } }

    subscript(_ key: String) -> JobKey {
        guard let found = keys.first(where: { $0.name == key }) else {
            preconditionFailure("\"\(key)\" is not a key of \(name) in JobKeys")
        }
        return found
    }
}

/// Every object the job-file decoder reads, with its keys: where each may appear, its type,
/// whether it is templated and whether `${env:…}` is allowed. The decoder refuses keys that are
/// not here; `JobSchemaAgreementTests` checks that `jobs/schema.json` says the same.
enum JobKeys {
    static let job = JobObjectKeys(
        name: "job", schema: "",
        keys: [
            JobKey("version", .integer),
            JobKey("name", .string, .env),
            JobKey("baseURL", .string, .env),
            JobKey("backend", .string),
            JobKey("concurrency", .integer),
            JobKey("rateLimit", .object),
            JobKey("timeout", .number),
            JobKey("retry", .object),
            JobKey("cookies", .boolean),
            JobKey("headers", .object, .env),
            JobKey("auth", .object),
            JobKey("outputDir", .string, .env),
            JobKey("home", .string, .env),
            JobKey("tasks", .array),
            JobKey("$schema", .any),
            JobKey("description", .any),
            JobKey("maxBodyBytes", .integer),
            JobKey("http2", .boolean),
            JobKey("trace", .boolean),
            JobKey("tls", .object),
            JobKey("hostThrottle", .booleanOrString),
            JobKey("deadline", .number),
            JobKey("notify", .object),
            JobKey("onResponse", .array),
            JobKey("checks", .object),
        ])

    /// The job's `checks`: what the run's data must show (``DataChecks``).
    static let jobChecks = JobObjectKeys(
        name: "checks", schema: "/properties/checks",
        keys: [
            JobKey("minRecords", .integer),
            JobKey("maxErrorRate", .number),
            JobKey("maxCursorAge", .number),
        ])

    /// A task's `checks`.
    static let taskChecks = JobObjectKeys(
        name: "task.checks", schema: "/$defs/task/properties/checks",
        keys: [JobKey("minRecords", .integer)])

    /// One rule of `onResponse` (the job's or a task's).
    static let responseRule = JobObjectKeys(
        name: "onResponse[]", schema: "/$defs/responseRule",
        keys: [
            JobKey("status", .array),
            JobKey("bodyContains", .stringOrArray),
            JobKey("action", .string),
        ])

    /// The job's `notify`: ping URLs (secrets, from `${env:…}` or `${file:…}` as a rule) and
    /// how long a ping may take.
    static let notify = JobObjectKeys(
        name: "notify", schema: "/properties/notify",
        keys: [
            JobKey("ping", .string, .env),
            JobKey("start", .string, .env),
            JobKey("success", .string, .env),
            JobKey("failure", .string, .env),
            JobKey("timeout", .number),
        ])

    /// The job's `tls`: files relative to the job file, a passphrase that is a secret.
    static let tls = JobObjectKeys(
        name: "tls", schema: "/properties/tls",
        keys: [
            JobKey("caBundle", .string, .env),
            JobKey("clientCertificate", .string, .env),
            JobKey("clientKey", .string, .env),
            JobKey("clientKeyPassphrase", .string, .env),
            JobKey("pinnedPublicKeys", .array),
            JobKey("minimumVersion", .string),
        ])

    static let rateLimit = JobObjectKeys(
        name: "rateLimit", schema: "/properties/rateLimit",
        keys: [
            JobKey("perSecond", .number),
            JobKey("burst", .integer),
            JobKey("scope", .string),
            JobKey("shared", .boolean),
        ])

    /// The job's `retry` and a task's.
    static let retry = JobObjectKeys(
        name: "retry", schema: "/$defs/retry",
        keys: [
            JobKey("maxAttempts", .integer),
            JobKey("initialDelay", .number),
            JobKey("multiplier", .number),
            JobKey("maxDelay", .number),
            JobKey("jitter", .boolean),
            JobKey("onStatus", .array),
            JobKey("onNetworkError", .boolean),
            JobKey("respectRetryAfter", .boolean),
            JobKey("nonIdempotent", .boolean),
            JobKey("onExpectation", .boolean),
        ])

    /// The job's `auth`: literal credentials.
    static let jobAuth = Auth(named: "auth", schema: "/properties/auth", templated: false)
    /// A task's `auth`: the same forms, as templates (captures, variables).
    static let taskAuth = Auth(
        named: "task.auth", schema: "/$defs/task/properties/auth", templated: true)

    static let task = JobObjectKeys(
        name: "task", schema: "/$defs/task",
        keys: [
            JobKey("id", .string, .templated),
            JobKey("method", .string),
            JobKey("path", .string, .templated, .env, .urlPath),
            JobKey("url", .string, .templated, .env, .wholeURL),
            JobKey("query", .object, .templated, .env),
            JobKey("headers", .object, .templated, .env),
            JobKey("json", .any, .templated, .env),
            JobKey("body", .string, .templated, .env),
            JobKey("bodyFile", .string),
            JobKey("expect", .object),
            JobKey("save", .string, .templated),
            JobKey("foreach", .object),
            JobKey("retry", .object),
            JobKey("timeout", .number),
            JobKey("description", .any),
            JobKey("paginate", .object),
            JobKey("since", .object),
            JobKey("prune", .booleanOrString),
            JobKey("conditional", .boolean),
            JobKey("zip", .boolean),
            JobKey("capture", .object),
            JobKey("auth", .object),
            JobKey("records", .object),
            JobKey("onResponse", .array),
            JobKey("checks", .object),
            JobKey("window", .object),
            JobKey("idempotencyKey", .booleanOrObject),
            JobKey("safe", .boolean),
        ])

    /// A task's `idempotencyKey` in its object form: the header its key goes in.
    static let idempotencyKey = JobObjectKeys(
        name: "task.idempotencyKey", schema: "/$defs/task/properties/idempotencyKey",
        keys: [JobKey("header", .string)])

    /// A task's `window`: the time windows it walks (``WindowRule``).
    static let window = JobObjectKeys(
        name: "task.window", schema: "/$defs/task/properties/window",
        keys: [
            JobKey("start", .string, .env),
            JobKey("step", .string),
            JobKey("end", .string, .env),
            JobKey("lag", .string),
            JobKey("format", .string),
        ])

    /// A task's `records`: where its responses' items go, and how they meet the file's.
    static let records = JobObjectKeys(
        name: "task.records", schema: "/$defs/task/properties/records",
        keys: [
            JobKey("from", .string),
            JobKey("to", .string, .templated),
            JobKey("write", .string),
            JobKey("key", .string),
            JobKey("deleted", .string),
            JobKey("where", .object),
            JobKey("select", .array),
            JobKey("drop", .array),
            JobKey("rename", .object),
            JobKey("add", .object, .templated),
            JobKey("csv", .booleanOrArray),
        ])

    static let expect = JobObjectKeys(
        name: "task.expect", schema: "/$defs/task/properties/expect",
        keys: [
            JobKey("status", .array),
            JobKey("json", .object),
            JobKey("headers", .object, .env),
            JobKey("bodyContains", .stringOrArray),
            JobKey("maxMs", .number),
        ])

    /// One entry of `capture` (the object under a capture's name).
    static let capture = JobObjectKeys(
        name: "task.capture.*", schema: "/$defs/task/properties/capture/additionalProperties",
        keys: [
            JobKey("json", .string),
            JobKey("header", .string),
            JobKey("secret", .boolean),
        ])

    /// One variable of `foreach` given as an object (a list is an array).
    static let foreachSource = JobObjectKeys(
        name: "task.foreach.*", schema: "/$defs/foreachSource",
        keys: [
            JobKey("range", .array),
            JobKey("lines", .string),
            JobKey("capture", .string),
        ])

    static let paginate = JobObjectKeys(
        name: "task.paginate", schema: "/$defs/task/properties/paginate",
        keys: [
            JobKey("next", .object),
            JobKey("stopWhen", .object),
            JobKey("maxPages", .integer),
            JobKey("items", .string),
            JobKey("pageSize", .integer),
            JobKey("requireNext", .boolean),
        ])

    /// `paginate.next`: exactly one of these rules.
    static let paginateNext = JobObjectKeys(
        name: "task.paginate.next", schema: "/$defs/task/properties/paginate/properties/next",
        keys: [
            JobKey("linkHeader", .string),
            JobKey("json", .string),
            JobKey("cursor", .object),
            JobKey("page", .object),
            JobKey("offset", .object),
            JobKey("header", .string),
            JobKey("headerParam", .object),
        ])

    static let paginateCursor = JobObjectKeys(
        name: "task.paginate.next.cursor", schema: "\(paginateNext.schema)/properties/cursor",
        keys: [JobKey("json", .string), JobKey("param", .string), JobKey("body", .string)])

    static let paginatePage = JobObjectKeys(
        name: "task.paginate.next.page", schema: "\(paginateNext.schema)/properties/page",
        keys: [JobKey("param", .string), JobKey("body", .string), JobKey("start", .integer)])

    static let paginateOffset = JobObjectKeys(
        name: "task.paginate.next.offset", schema: "\(paginateNext.schema)/properties/offset",
        keys: [JobKey("param", .string), JobKey("body", .string), JobKey("step", .integer)])

    static let paginateHeaderParam = JobObjectKeys(
        name: "task.paginate.next.headerParam",
        schema: "\(paginateNext.schema)/properties/headerParam",
        keys: [JobKey("header", .string), JobKey("param", .string)])

    static let since = JobObjectKeys(
        name: "task.since", schema: "/$defs/task/properties/since",
        keys: [
            JobKey("max", .string),
            JobKey("header", .string),
            JobKey("start", .string, .env),
            JobKey("lookback", .number),
        ])

    static let stopWhen = JobObjectKeys(
        name: "task.paginate.stopWhen",
        schema: "/$defs/task/properties/paginate/properties/stopWhen",
        keys: [JobKey("empty", .string), JobKey("false", .string), JobKey("total", .string)])

    /// Every object above, for the schema check.
    static let all: [JobObjectKeys] = [
        job, notify, tls, rateLimit, retry, responseRule, jobChecks, taskChecks, window,
        jobAuth.forms,
        jobAuth.basic,
        jobAuth.header,
        jobAuth.oauth2,
        task, taskAuth.forms, taskAuth.basic, taskAuth.header, taskAuth.oauth2, records, expect,
        capture, idempotencyKey,
        foreachSource, paginate, paginateNext, paginateHeaderParam, since, paginateCursor,
        paginatePage, paginateOffset, stopWhen,
    ]
}
