import Courier
import Foundation

/// Turns one spec and one set of variable values into a request.
enum TaskBuilder {
    static func build(
        _ spec: TaskSpec, bindings: [String: String], job: Job
    ) -> Result<ExpandedTask, JobFileError> {
        func error(_ key: String, _ message: String) -> Result<ExpandedTask, JobFileError> {
            .failure(
                JobFileError(
                    file: job.file.relativePath, path: "\(spec.path).\(key)", message: message))
        }
        let id = Template(spec.id).render(bindings)
        let query = spec.query.map {
            URLQueryItem(name: $0.name, value: Template($0.value).render(bindings))
        }
        let url: URL
        switch spec.target {
        case .path(let template):
            let path = Template(template).render(bindings)
            let joined =
                if let base = job.urlBase {
                    try? URLBuilder.url(base: base, path: path, query: query)
                } else {
                    try? URLBuilder.url(baseURL: job.baseURL, path: path, query: query)
                }
            guard let built = joined else {
                return error("path", "\"\(path)\" does not make a valid URL (task \(id))")
            }
            url = built
        case .url(let template):
            let text = Template(template).render(bindings)
            guard let parsed = JobDecoder.httpURL(text) else {
                return error(
                    "url", "expected an absolute http or https URL, found \"\(text)\" (task \(id))")
            }
            url = URLBuilder.appending(query, to: parsed)
        }
        var headers = HTTPHeaders(job.headers.map { ($0.name, $0.value) })
        headers = headers.merging(
            HTTPHeaders(spec.headers.map { ($0.name, Template($0.value).render(bindings)) }))
        var body: Data?
        switch spec.body {
        case .json(let node):
            body = Data(JSONWriter.string(JSONBody.value(of: node, bindings: bindings)).utf8)
            if !headers.contains("Content-Type") { headers.add("Content-Type", "application/json") }
        case .text(let template):
            body = Data(Template(template).render(bindings).utf8)
        case .file(let file):
            do {
                body = Data(try FileSystem.read(file))
            } catch let failure {
                return error("bodyFile", "\(failure)")
            }
        case nil:
            break
        }
        var save: String?
        if let template = spec.save {
            let rendered = Template(template).render(bindings)
            if let problem = OutputPath.problem(with: rendered) {
                return error("save", "\(problem) (task \(id))")
            }
            save = rendered
        }
        var request = HTTPRequest(
            url: url, method: spec.method, headers: headers, body: body, timeout: spec.timeout)
        job.auth?.apply(to: &request)
        // Validation (``check(_:bindings:job:)``) refused CR/LF in every expanded header; the
        // transport checks again before anything is sent.
        return .success(
            ExpandedTask(
                id: id, request: request, expectStatus: spec.expectStatus,
                expectation: spec.expectation, paginate: spec.paginate,
                conditional: spec.conditional, save: save,
                retry: spec.retry,
                specPath: spec.path))
    }
}

extension TaskBuilder {
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
        let id = Template(spec.id).render(bindings)
        switch spec.target {
        case .path(let template):
            let path = Template(template).render(bindings)
            if job.baseURL == nil || path.contains(":") {
                let query = spec.query.map {
                    URLQueryItem(name: $0.name, value: Template($0.value).render(bindings))
                }
                guard (try? URLBuilder.url(baseURL: job.baseURL, path: path, query: query)) != nil
                else {
                    return error("path", "\"\(path)\" does not make a valid URL (task \(id))")
                }
            }
        case .url(let template):
            let text = Template(template).render(bindings)
            guard JobDecoder.httpURL(text) != nil else {
                return error(
                    "url", "expected an absolute http or https URL, found \"\(text)\" (task \(id))")
            }
        }
        // Whatever a value came from (a lines file, a list), it must not reach the wire as
        // something else: CR/LF in a header would start a header of its own.
        for header in spec.headers {
            let name = header.name
            let value = Template(header.value).render(bindings)
            guard WireRequest.isToken(name) else {
                return error(
                    "headers",
                    "header name \"\(name)\" is not a valid token after expansion (task \(id))")
            }
            guard WireRequest.isFieldValue(value) else {
                return error(
                    "headers",
                    "the value of header \(name) contains CR, LF or NUL after expansion (task \(id))"
                )
            }
        }
        if let template = spec.save {
            let rendered = Template(template).render(bindings)
            if let problem = OutputPath.problem(with: rendered) {
                return error("save", "\(problem) (task \(id))")
            }
        }
        return .success(id)
    }
}

/// Renders a task's `json` with `{variable}` replaced in every string value.
enum JSONBody {
    static func value(of node: JSONNode, bindings: [String: String]) -> JSONWriter.Value {
        switch node.value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number: .raw(node.numberSource ?? "0")
        case .string(let text): .string(Template(text).render(bindings))
        case .array(let elements): .array(elements.map { value(of: $0, bindings: bindings) })
        case .object(let members):
            .object(members.map { ($0.key, value(of: $0.node, bindings: bindings)) })
        }
    }
}
