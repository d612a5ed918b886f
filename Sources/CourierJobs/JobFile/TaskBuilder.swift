import Courier
import Foundation

/// Turns one spec and one set of variable values into a request.
enum TaskBuilder {
    /// - Parameters:
    ///   - index: the spec's place in the job's `tasks`, carried by the task.
    ///   - base: the job's `baseURL` taken apart once per expansion, not once per task.
    ///   - cursors: the `since` tasks' kept cursors by task id (``SinceState``), as the run
    ///     found them: what `{since}` renders from.
    static func build(
        _ spec: TaskSpec, index: Int, bindings: [String: String], job: Job,
        base: URLBuilder.Base?, cursors: [String: String]
    ) -> Result<ExpandedTask, JobFileError> {
        func error(_ key: String, _ message: String) -> Result<ExpandedTask, JobFileError> {
            .failure(
                JobFileError(
                    file: job.file.relativePath, path: "\(spec.path).\(key)", message: message))
        }
        let templates = spec.compiled ?? CompiledTemplates(spec)
        let id = templates.id.render(bindings)
        if let problem = SecretInTaskID.problem(id, spec: spec, job: job) {
            return error("id", problem)
        }
        let bindings = withSince(bindings, spec: spec, cursor: cursors[id])
        let query = templates.query.map {
            URLQueryItem(name: $0.name, value: $0.value.render(bindings))
        }
        // Validation (``check(_:bindings:job:)``) measured every expansion it could see; only
        // values captured while running are new here, so only their tasks pay to re-measure.
        if spec.isDependent,
            let problem = oversized(templates, bindings: bindings, id: id, target: spec.target)
        {
            return error(problem.key, problem.message)
        }
        let url: URL
        switch target(
            spec.target, templates: templates, bindings: bindings, query: query, id: id, base: base)
        {
        case .success(let built): url = built
        case .failure(let problem): return error(problem.key, problem.message)
        }
        var headers = HTTPHeaders(job.headers.map { ($0.name, $0.value) })
        headers = headers.merging(
            HTTPHeaders(templates.headers.map { ($0.name, $0.value.render(bindings)) }))
        let body: Data?
        let streamed: StreamedBody?
        switch Self.body(spec.body, templates: templates, bindings: bindings, headers: &headers) {
        case .success(let built): (body, streamed) = built
        case .failure(let problem): return error(problem.key, problem.message)
        }
        let save: String?
        switch savePath(templates.save, bindings: bindings, id: id, job: job) {
        case .success(let path): save = path
        case .failure(let problem): return error(problem.key, problem.message)
        }
        let records: RecordsTarget?
        switch recordsPath(templates.recordsTo, bindings: bindings, id: id, job: job) {
        case .success(let path):
            records = path.flatMap { path in
                spec.records.map {
                    RecordsTarget(rule: $0, path: path, added: $0.shaping.added(bindings))
                }
            }
        case .failure(let problem): return error(problem.key, problem.message)
        }
        var request = HTTPRequest(
            url: url, method: spec.method, headers: headers, body: body, timeout: spec.timeout)
        request.streamedBody = streamed
        request.tls = job.tls
        authorize(&request, spec: spec, bindings: bindings, job: job)
        SecretMarking.mark(&request, spec: spec, templates: templates, job: job)
        let digest = IdempotencyKey.identify(&request, spec: spec, job: job, task: id)
        // Validation (``check(_:bindings:job:)``) refused CR/LF in every expanded header; the
        // transport checks again before anything is sent.
        var task = ExpandedTask(
            .init(
                id: id, request: request, expectStatus: spec.expectStatus,
                expectation: spec.expectation.isTemplated
                    ? spec.expectation.rendered(bindings) : spec.expectation,
                paginate: spec.paginate, since: spec.since,
                conditional: spec.conditional, save: save, records: records,
                retry: spec.retry,
                specPath: spec.path, specIndex: index))
        task.oauth2 = spec.oauth2(in: job)
        task.writeDigest = digest
        if spec.window != nil { task.windowEnd = bindings[WindowRule.endVariable] }
        return .success(task)
    }
}

extension TaskBuilder {
    /// The id `spec` gives a task with `bindings`.
    static func id(of spec: TaskSpec, bindings: [String: String]) -> String {
        (spec.compiled ?? CompiledTemplates(spec)).id.render(bindings)
    }

    /// The task's own credentials (perhaps a captured token, or OAuth2) replace the job's.
    /// OAuth2 tokens are asked for when the task is sent, not now (``OAuth2Sessions``).
    static func authorize(
        _ request: inout HTTPRequest, spec: TaskSpec, bindings: [String: String], job: Job
    ) {
        if spec.auth != nil || spec.oauth2 != nil {
            spec.auth?.rendered(bindings).apply(to: &request)
        } else {
            job.auth?.apply(to: &request)
        }
    }

    /// Why a rendered `path` may not be sent: a value (`{+base}` of a capture, a `foreach`
    /// value) made it an absolute URL, which is not joined to `baseURL` and would take the
    /// job's `auth` to its host (trial III: a server's answer drew the bearer token to
    /// another port). A literal one is refused when the file is read (``TaskDecoder``).
    static func absolutePath(_ path: String, id: String) -> Problem? {
        guard let scheme = TaskDecoder.scheme(of: path) else { return nil }
        return Problem(
            key: "path",
            message:
                "a value made the path an absolute URL (\"\(scheme):…\"), which is not joined to baseURL: not sent (task \(id)); give such URLs as \"url\""
        )
    }

    /// The task's URL: its `path` joined to the job's base, or its `url`, with its query.
    static func target(
        _ target: TaskSpec.Target, templates: CompiledTemplates, bindings: [String: String],
        query: [URLQueryItem], id: String, base: URLBuilder.Base?
    ) -> Result<URL, Problem> {
        switch target {
        case .path:
            let path: String
            switch templates.target.renderPath(bindings) {
            case .success(let rendered): path = rendered
            case .failure(let problem):
                return .failure(Problem(key: "path", message: message(problem, id: id)))
            }
            if let problem = absolutePath(path, id: id) { return .failure(problem) }
            let joined =
                if let base {
                    try? URLBuilder.url(base: base, path: path, query: query)
                } else {
                    try? URLBuilder.url(baseURL: nil, path: path, query: query)
                }
            guard let built = joined else {
                return .failure(
                    Problem(
                        key: "path", message: "\"\(path)\" does not make a valid URL (task \(id))"))
            }
            return .success(built)
        case .url:
            return absoluteURL(templates.target, bindings: bindings, id: id).map {
                URLBuilder.appending(query, to: $0)
            }
        }
    }

    /// The task's body: bytes (a JSON body adds `Content-Type` when the task has none), or
    /// a file streamed as it is sent.
    static func body(
        _ body: TaskSpec.Body?, templates: CompiledTemplates, bindings: [String: String],
        headers: inout HTTPHeaders
    ) -> Result<(Data?, StreamedBody?), Problem> {
        switch body {
        case .json(let node):
            if !headers.contains("Content-Type") { headers.add("Content-Type", "application/json") }
            return .success(
                (Data(JSONWriter.string(JSONBody.value(of: node, bindings: bindings)).utf8), nil))
        case .text(let text):
            return .success((Data((templates.body ?? Template(text)).render(bindings).utf8), nil))
        case .file(let file):
            // Streamed from the file as it is sent, on every attempt: memory stays flat
            // whatever its size, and a dry run never reads it. Regular files only: a device
            // or a FIFO (`/dev/urandom`) would be read for ever.
            if let problem = FileSystem.notRegularFile(file) {
                return .failure(Problem(key: "bodyFile", message: problem))
            }
            return .success((nil, .file(file)))
        case nil:
            return .success((nil, nil))
        }
    }

    /// `bindings` with `{since}`: the task's kept cursor less its lookback, or its start.
    static func withSince(
        _ bindings: [String: String], spec: TaskSpec, cursor: String?
    ) -> [String: String] {
        guard let since = spec.since else { return bindings }
        var bindings = bindings
        bindings["since"] = since.offered(cursor)
        return bindings
    }

    /// What validation needs of one expansion, without building the request: the id, and an
    /// error if the task could not be sent as written. A path joined to the base URL is always
    /// a valid URL (every byte that could break it is percent-encoded), so only absolute URLs
    /// are parsed; that keeps validating a million tasks to a fraction of building them.
    static func check(
        _ spec: TaskSpec, bindings: [String: String], job: Job
    ) -> Result<String, JobFileError> {
        func error(_ key: String, _ message: String) -> Result<String, JobFileError> {
            .failure(
                JobFileError(
                    file: job.file.relativePath, path: "\(spec.path).\(key)", message: message))
        }
        // A value longer than any URL or header should be (a runaway line in a lines file)
        // would make every byte after it huge: the log line, the request, the plan.
        for (name, value) in bindings where value.utf8.count > LineReader.maximumValueBytes {
            return error(
                "foreach.\(name)",
                "a value is longer than \(LineReader.maximumValueBytes) bytes (it starts \"\(value.prefix(40))…\")"
            )
        }
        let templates = spec.compiled ?? CompiledTemplates(spec)
        let id = templates.id.render(bindings)
        if let problem = SecretInTaskID.problem(id, spec: spec, job: job) {
            return error("id", problem)
        }
        // Validated with the start value: the cursors are the run's, read later.
        let bindings = withSince(bindings, spec: spec, cursor: nil)
        if let problem = oversized(templates, bindings: bindings, id: id, target: spec.target) {
            return error(problem.key, problem.message)
        }
        switch spec.target {
        case .path:
            let path: String
            switch templates.target.renderPath(bindings) {
            case .success(let rendered): path = rendered
            case .failure(let problem): return error("path", Self.message(problem, id: id))
            }
            if let problem = absolutePath(path, id: id) {
                return error(problem.key, problem.message)
            }
            if job.baseURL == nil || path.utf8.contains(UInt8(ascii: ":")) {
                let query = templates.query.map {
                    URLQueryItem(name: $0.name, value: $0.value.render(bindings))
                }
                guard (try? URLBuilder.url(baseURL: job.baseURL, path: path, query: query)) != nil
                else {
                    return error("path", "\"\(path)\" does not make a valid URL (task \(id))")
                }
            }
        case .url:
            if case .failure(let problem) = absoluteURL(
                templates.target, bindings: bindings, id: id)
            {
                return error(problem.key, problem.message)
            }
        }
        // Whatever a value came from (a lines file, a list), it must not reach the wire as
        // something else: CR/LF in a header would start a header of its own. (Header names
        // are not templates; the decoder checked them.)
        for header in templates.headers
        where !WireRequest.isFieldValue(header.value.render(bindings)) {
            return error(
                "headers",
                "the value of header \(header.name) contains CR, LF or NUL after expansion (task \(id))"
            )
        }
        if case .failure(let problem) = savePath(
            templates.save, bindings: bindings, id: id, job: job)
        {
            return error(problem.key, problem.message)
        }
        if case .failure(let problem) = recordsPath(
            templates.recordsTo, bindings: bindings, id: id, job: job)
        {
            return error(problem.key, problem.message)
        }
        return .success(id)
    }

    /// The most bytes an expanded task id, URL (path or url with its query) or header value
    /// may have, and a save path. Values are capped at 64 KiB each, but a template can repeat
    /// one: without these, one task could write megabytes into every log line.
    static let maximumExpandedBytes = 65_536
    static let maximumSavePathBytes = 4_096

    /// The first expanded field over its limit, if any. Measured, not rendered: validation
    /// runs this for every expansion of a million-line job.
    static func oversized(
        _ templates: CompiledTemplates, bindings: [String: String], id: String,
        target: TaskSpec.Target
    ) -> Problem? {
        let limit = maximumExpandedBytes
        let shownID = id.utf8.count > 80 ? String(id.prefix(80)) + "…" : id
        if id.utf8.count > limit {
            return Problem(
                key: "id", message: "is \(id.utf8.count) bytes after expansion; at most \(limit)")
        }
        let urlBytes = templates.query.reduce(templates.target.renderedByteCount(bindings)) {
            $0 + $1.name.utf8.count + $1.value.renderedByteCount(bindings) + 2
        }
        if urlBytes > limit {
            let key: String
            switch target {
            case .path: key = "path"
            case .url: key = "url"
            }
            return Problem(
                key: key,
                message:
                    "the URL is \(urlBytes) bytes after expansion; at most \(limit) (task \(shownID))"
            )
        }
        for header in templates.headers {
            let count = header.value.renderedByteCount(bindings)
            if count > limit {
                return Problem(
                    key: "headers",
                    message:
                        "the value of header \(header.name) is \(count) bytes after expansion; at most \(limit) (task \(shownID))"
                )
            }
        }
        for (key, template) in [("save", templates.save), ("records.to", templates.recordsTo)] {
            if let count = template?.renderedByteCount(bindings), count > maximumSavePathBytes {
                return Problem(
                    key: key,
                    message:
                        "is \(count) bytes after expansion; at most \(maximumSavePathBytes) (task \(shownID))"
                )
            }
        }
        return nil
    }

    /// A problem with one expansion: the spec's key and what is wrong.
    struct Problem: Error {
        let key: String
        let message: String
    }

    /// A `url` template rendered and parsed as an absolute http(s) URL.
    static func absoluteURL(_ template: Template, bindings: [String: String], id: String)
        -> Result<URL, Problem>
    {
        let text = template.render(bindings)
        guard let url = Origin.httpURL(PercentEncoding.urlText(text)) else {
            return .failure(
                Problem(
                    key: "url",
                    message:
                        "expected an absolute http or https URL, found \"\(text)\" (task \(id))"))
        }
        return .success(url)
    }

    /// Why a value cannot go in the path, in words.
    static func message(_ problem: Template.PathValueError, id: String) -> String {
        "the value \"\(problem.value)\" of {\(problem.variable)} would be a whole \"\(problem.value)\" segment, which climbs the path; not sent (write {+\(problem.variable)} to put values in as they are) (task \(id))"
    }
}

/// Renders a task's `json` with `{variable}` replaced in every string value.
enum JSONBody {
    static func value(of node: JSONNode, bindings: [String: String]) -> JSONWriter.Value {
        switch node.value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number: .raw(node.numberSource ?? "0")
        // Rendered with no bindings too: `{{…}}` escapes are written as single braces.
        case .string(let text): .string(Template(text).render(bindings))
        case .array(let elements): .array(elements.map { value(of: $0, bindings: bindings) })
        case .object(let members):
            .object(members.map { ($0.key, value(of: $0.node, bindings: bindings)) })
        }
    }
}

extension JSONNode {
    /// The value as compact JSON text, numbers as written.
    var compactText: String { JSONWriter.string(JSONBody.value(of: self, bindings: [:])) }
}
