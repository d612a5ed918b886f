import Courier
import Foundation

/// Reads and validates a job file (version 1). Every problem is reported at once, each with the
/// file, the JSON path and the line:column; nothing is sent until the file is clean.
enum JobDecoder {
    /// Loads the job at `url`, resolving `${env:…}` from `environment`.
    /// The largest job file read: a job that needs more is data, and belongs in a `lines` file.
    static let maximumFileBytes = 16 << 20

    static func load(
        _ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment,
        baseURL: String? = nil, window: WindowOverride? = nil
    ) throws(JobFileErrors) -> Job {
        try load(from: url, as: url, environment: environment, baseURL: baseURL, window: window)
    }

    /// How a job read from standard input is named in messages and the log's `jobFile`.
    /// Its relative paths (`lines`, `bodyFile`, `tls` files) are taken from the working
    /// directory, where this name stands.
    static let standardInput = URL(fileURLWithPath: "<stdin>")

    /// Loads the job a command line names: `-` is standard input (``standardInput``).
    /// `baseURL`, when given (`courier run --base-url`), stands for the file's own: the same job
    /// against another server (a staging copy, a local fixture), with no edit to the file.
    static func load(
        argument: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        baseURL: String? = nil, window: WindowOverride? = nil
    ) throws(JobFileErrors) -> Job {
        guard argument == "-" else {
            return try load(
                URL(fileURLWithPath: argument), environment: environment, baseURL: baseURL,
                window: window)
        }
        return try load(
            from: URL(fileURLWithPath: "/dev/stdin"), as: standardInput, environment: environment,
            baseURL: baseURL, window: window)
    }

    /// Reads `source` and decodes it as the job file `file`.
    private static func load(
        from source: URL, as url: URL, environment: [String: String], baseURL: String? = nil,
        window: WindowOverride? = nil
    ) throws(JobFileErrors) -> Job {
        let name = url.relativePath
        let data: Data
        do {
            data = Data(try FileSystem.read(source, limit: maximumFileBytes))
        } catch  where error.code == EFBIG {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "",
                    message:
                        "the file is larger than \(maximumFileBytes >> 20) MiB, the most a job file may be; put long lists of values in a `lines` file"
                )
            ])
        } catch {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "",
                    message: "cannot read the file (\(String(cString: strerror(error.code))))")
            ])
        }
        if data.isEmpty {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "",
                    message: url == standardInput
                        ? "standard input was empty: a job file is a JSON object"
                        : "the file is empty: a job file is a JSON object"
                )
            ])
        }
        return try decode(
            data, file: url, environment: environment, baseURL: baseURL, window: window)
    }

    /// Validates job-file bytes; `file` names it in messages and anchors relative paths.
    static func decode(
        _ data: Data, file: URL, environment: [String: String], baseURL: String? = nil,
        window: WindowOverride? = nil
    ) throws(JobFileErrors) -> Job {
        let name = file.relativePath
        // Invalid bytes would otherwise become U+FFFD in names, URLs and bodies, silently.
        if let (line, column) = invalidUTF8(in: data) {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "",
                    message: "the file is not valid UTF-8 (save it as UTF-8)", line: line,
                    column: column)
            ])
        }
        if let (line, column) = reservedCharacter(in: data) {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "",
                    message:
                        "U+E000 (a private-use character) cannot be in a job file: courier marks the braces of environment values with it, and would send it as \"{\"",
                    line: line, column: column)
            ])
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(Array(data))
        } catch {
            throw JobFileErrors(errors: [
                JobFileError(
                    file: name, path: "", message: "invalid JSON: \(error.message)",
                    line: error.line, column: error.column)
            ])
        }
        let context = DecodingContext(
            file: name, environment: environment, folder: file.deletingLastPathComponent())
        context.baseURLOverride = baseURL
        context.windowOverride = window
        let job = decodeJob(root, file: file, data: data, context: context)
        UnreplacedReferences.check(root, references: context.errors.isEmpty, context: context)
        if var job, context.errors.isEmpty {
            job.notes = context.notes
            job.baseURLOverride = baseURL
            job.emptySecrets = context.emptySecrets
            job.ownFiles = OwnFiles.under(
                job.outputDir, file: file, logs: job.home.logs.appendingPathComponent(job.name))
            return job
        }
        // Messages quote values, and a value may have come from ${env:…}.
        throw JobFileErrors(errors: context.errors).scrubbed(
            with: Redactor(secrets: context.secrets))
    }

    private static func decodeJob(
        _ root: JSONNode, file: URL, data: Data, context: DecodingContext
    ) -> Job? {
        guard var reader = NodeReader(root, path: "", keys: JobKeys.job, context: context) else {
            return nil
        }
        _ = reader.take("$schema")
        _ = reader.take("description")
        decodeVersion(&reader, root: root, context: context)
        let name = decodeName(&reader, context: context)
        let baseURL = decodeBaseURL(&reader, context: context)
        let backend = reader.choice("backend", of: Backend.self) ?? .curl
        let concurrency =
            reader.integer("concurrency", range: 1...10_000, what: "a whole number from 1 to 10000")
            ?? 8
        let timeout =
            reader.number("timeout", range: 0.001...86_400, what: "seconds greater than 0") ?? 30
        let deadline = reader.number(
            "deadline", range: 0.001...31_536_000, what: "seconds greater than 0 (at most a year)")
        let rateLimit = reader.take("rateLimit").flatMap { decodeRateLimit($0, context: context) }
        let retry =
            reader.take("retry").map {
                decodeRetry($0, path: "retry", base: RetryPolicy(), context: context)
            } ?? RetryPolicy()
        let headers = decodeHeaders(&reader, root: root, context: context)
        let authForm = reader.take("auth").flatMap { decodeAuth($0, context: context) }
        let auth = authForm?.credentials
        let cookies = reader.bool("cookies") ?? false
        let trace = reader.bool("trace") ?? false
        let maxBodyBytes =
            reader.integer(
                "maxBodyBytes", range: 1024...(4 << 30),
                what: "a whole number of bytes from 1024 to 4294967296")
            ?? Job.defaultMaxBodyBytes
        let outputDir = decodeOutputDir(&reader, name: name, context: context)
        let home = decodeHome(&reader, file: file)
        let (hostThrottle, sharedHosts) = decodeHostThrottle(&reader)
        let (http2, tls) = decodeTransport(&reader, file: file, backend: backend, context: context)
        let notify = reader.take("notify").flatMap { decodeNotify($0, context: context) }
        var defaults = TaskDefaults(
            retry: retry, timeout: timeout, jobFolder: file.deletingLastPathComponent(),
            // A baseURL given but refused has its error: no second one for each `path`.
            hasBaseURL: baseURL != nil || context.baseURLUnresolved || reader.has("baseURL"))
        defaults.outputDir = home.resolve(outputDir)
        defaults.responseRules =
            reader.take("onResponse").flatMap {
                decodeResponseRules($0, path: "onResponse", context: context)
            } ?? []
        let checksNode = reader.take("checks")
        var tasks = decodeTasks(&reader, root: root, defaults: defaults, context: context)
        let checks = decodeJobChecks(checksNode, tasks: tasks, context: context)
        if context.windowOverride != nil, !tasks.contains(where: { $0.window != nil }) {
            context.error(
                "tasks",
                "--window backfills the tasks that have a \"window\", and this job has none",
                at: nil)
        }
        reader.rejectUnknownKeys()
        CaptureLinker.link(&tasks, context: context)
        RecordsRule.checkShared(tasks, context: context)
        addSecrets(of: auth, headers: headers, context: context)
        var job = Job(
            name: name, baseURL: baseURL, backend: backend, concurrency: concurrency,
            rateLimit: rateLimit, timeout: timeout, retry: retry, headers: headers, auth: auth,
            oauth2: authForm?.oauth2, cookies: cookies, maxBodyBytes: maxBodyBytes, http2: http2,
            tls: tls, hostThrottle: hostThrottle, deadline: deadline,
            outputDir: home.resolve(outputDir), tasks: tasks,
            file: file,
            sha256: SHA256.hex(of: data),
            secrets: context.secrets)
        job.notify = notify
        job.trace = trace
        job.sharedHosts = sharedHosts
        job.checks = checks
        job.home = home
        job.writtenOutputDir = outputDir
        return job
    }

    static func decodeRateLimit(_ node: JSONNode, context: DecodingContext) -> RateLimitSettings? {
        guard
            var reader = NodeReader(
                node, path: "rateLimit", keys: JobKeys.rateLimit, context: context)
        else { return nil }
        let perSecond = reader.number(
            "perSecond", range: 0.001...1_000_000, what: "requests per second from 0.001 to 1000000"
        )
        if reader.take("perSecond") == nil {
            context.error("rateLimit.perSecond", "is required (requests per second)", at: node)
        }
        let burst = reader.integer(
            "burst", range: 1...1_000_000, what: "a whole number of at least 1")
        let scope = reader.choice("scope", of: RateLimitScope.self) ?? .job
        let shared = reader.bool("shared") ?? false
        reader.rejectUnknownKeys()
        guard let perSecond else { return nil }
        return RateLimitSettings(
            perSecond: perSecond, burst: burst ?? max(1, Int(perSecond.rounded(.up))), scope: scope,
            shared: shared)
    }

    static func decodeRetry(
        _ node: JSONNode, path: String, base: RetryPolicy, context: DecodingContext
    ) -> RetryPolicy {
        guard var reader = NodeReader(node, path: path, keys: JobKeys.retry, context: context)
        else { return base }
        var policy = base
        if let value = reader.integer(
            "maxAttempts", range: 1...100, what: "a whole number from 1 to 100")
        {
            policy.maxAttempts = value
        }
        if let value = reader.number(
            "initialDelay", range: 0...3600, what: "seconds from 0 to 3600")
        {
            policy.initialDelay = value
        }
        if let value = reader.number("multiplier", range: 1...100, what: "a number from 1 to 100") {
            policy.multiplier = value
        }
        if let value = reader.number("maxDelay", range: 0...86_400, what: "seconds from 0 to 86400")
        {
            policy.maxDelay = value
        }
        if let value = reader.bool("jitter") { policy.jitter = value }
        if let value = reader.bool("onNetworkError") { policy.retriesNetworkErrors = value }
        if let value = reader.bool("respectRetryAfter") { policy.respectsRetryAfter = value }
        if let value = reader.bool("nonIdempotent") { policy.retriesNonIdempotent = value }
        if let value = reader.bool("onExpectation") { policy.retriesOnExpectation = value }
        if let statuses = reader.take("onStatus") {
            if let set = statusSet(statuses, path: "\(path).onStatus", context: context) {
                policy.retryableStatuses = set
            }
        }
        reader.rejectUnknownKeys()
        return policy
    }

    static func statusSet(_ node: JSONNode, path: String, context: DecodingContext) -> Set<Int>? {
        guard case .array(let elements) = node.value else {
            context.error(
                path, "expected an array of HTTP statuses (100–599), found \(node.value.typeName)",
                at: node)
            return nil
        }
        var statuses = Set<Int>()
        for (index, element) in elements.enumerated() {
            guard case .number(let number) = element.value, let status = Int(exactly: number),
                (100...599).contains(status)
            else {
                context.error(
                    "\(path)[\(index)]",
                    "expected an HTTP status from 100 to 599, found \(NodeReader.describe(element))",
                    at: element)
                continue
            }
            statuses.insert(status)
        }
        return statuses
    }

    /// `base64(user:password)`, Basic authentication's form of a credential on the wire.
    static func basicCredential(_ user: String, _ password: String) -> String {
        Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The literal values of secret headers (`Authorization`, `Cookie`, API keys) written in
    /// the job file are secrets too, whole and without their scheme (`Bearer abc` → `abc`):
    /// a server may echo them back.
    static func addLiteralCredentials(
        _ headers: [(name: String, value: String)], context: DecodingContext
    ) {
        for header in headers where SecretHeaders.isSecret(header.name) {
            context.addSecret(header.value)
            // Only after a scheme's name (letters, digits, `-`), and not a stub too short to
            // search for: a key with a space in it is no scheme and a credential (trial OO:
            // `key-v@lue&x y` made `y` a secret, and a warning of one "shorter than 4").
            guard let space = header.value.firstIndex(of: " ") else { continue }
            let scheme = header.value[..<space]
            let rest = header.value[header.value.index(after: space)...]
                .trimmingCharacters(in: .whitespaces)
            if !scheme.isEmpty,
                scheme.unicodeScalars.allSatisfy({
                    CharacterSet.alphanumerics.contains($0) || $0 == "-"
                }),
                rest.utf8.count >= Redactor.minimumLength
            {
                context.addSecret(rest)
            }
        }
    }

    /// - Parameter keys: ``JobKeys/taskAuth`` for a task's `auth`, whose strings are templates.
    static func decodeAuth(
        _ node: JSONNode, path: String = "auth", keys: JobKeys.Auth = JobKeys.jobAuth,
        context: DecodingContext
    ) -> AuthForm? {
        guard var reader = NodeReader(node, path: path, keys: keys.forms, context: context)
        else { return nil }
        let forms = keys.forms.names
        let given = forms.filter { reader.take($0) != nil }
        guard given.count == 1 else {
            context.error(
                path,
                "expected exactly one of \"bearer\", \"basic\", \"header\" or \"oauth2\", found \(given.isEmpty ? "none" : given.joined(separator: " and "))",
                at: node)
            reader.rejectUnknownKeys()
            return nil
        }
        defer { reader.rejectUnknownKeys() }
        switch given[0] {
        case "bearer":
            return reader.string("bearer").map { .credentials(.bearer($0)) }
        case "basic":
            guard let inner = reader.take("basic"),
                var basic = NodeReader(
                    inner, path: "\(path).basic", keys: keys.basic, context: context)
            else { return nil }
            let user = basic.string("user", required: true)
            let password = basic.string("password", required: true)
            basic.rejectUnknownKeys()
            guard let user, let password else { return nil }
            return .credentials(.basic(user: user, password: password))
        case "oauth2":
            return reader.take("oauth2").flatMap {
                decodeOAuth2($0, path: "\(path).oauth2", keys: keys.oauth2, context: context)
            }.map(AuthForm.oauth2)
        default:
            guard let inner = reader.take("header"),
                var header = NodeReader(
                    inner, path: "\(path).header", keys: keys.header, context: context)
            else { return nil }
            let name = header.string("name", required: true)
            let value = header.string("value", required: true)
            header.rejectUnknownKeys()
            guard let name, let value else { return nil }
            return .credentials(.header(name: name, value: value))
        }
    }

    static func validateHeaderNames(
        _ headers: [(name: String, value: String)], path: String, at node: JSONNode,
        nodes: [String: JSONNode] = [:], context: DecodingContext
    ) {
        // Each at its own value when known (trial FFF: at the task's start).
        for header in headers where !HTTPMethod(header.name).isValidToken {
            context.error(
                "\(path).\(header.name)", "is not a valid header name",
                at: nodes[header.name] ?? node)
        }
        for header in headers where header.value.contains("\r") || header.value.contains("\n") {
            context.error(
                "\(path).\(header.name)", "header values may not contain line breaks",
                at: nodes[header.name] ?? node)
        }
    }
}

/// What tasks inherit from their job.
struct TaskDefaults {
    var retry: RetryPolicy
    /// The job's `outputDir` (resolved), where a `window` task's done windows are kept.
    var outputDir = ""
    /// The job's `onResponse`, for tasks without their own.
    var responseRules: [ResponseRule] = []
    var timeout: TimeInterval
    var jobFolder: URL
    var hasBaseURL: Bool
}
