import Courier
import Foundation

/// One request to make: a task after `foreach` expansion and templating.
public struct ExpandedTask: Sendable {
    public var id: String
    public var request: HTTPRequest
    /// Accepted statuses; `nil` means any 2xx.
    public var expectStatus: Set<Int>?
    /// Relative to the job's `outputDir`.
    public var save: String?
    public var retry: RetryPolicy
    /// The spec's JSON path (`tasks[3]`), for messages.
    public var specPath: String

    /// Whether `status` meets the task's expectation.
    public func accepts(_ status: Int) -> Bool {
        expectStatus?.contains(status) ?? (200..<300).contains(status)
    }
}

/// Expands a job's tasks lazily, in file order: `foreach` values are produced one combination
/// at a time (a `lines` file is streamed, re-read for each outer value of a product).
public struct TaskExpander: Sequence {
    public let job: Job

    public init(job: Job) { self.job = job }

    public func makeIterator() -> Iterator { Iterator(job: job) }

    /// Produces expanded tasks or the error that one of them carries.
    public struct Iterator: IteratorProtocol {
        private let job: Job
        private var specIndex = 0
        private var combinations: CombinationIterator?

        init(job: Job) { self.job = job }

        public mutating func next() -> Result<ExpandedTask, JobFileError>? {
            while specIndex < job.tasks.count {
                let spec = job.tasks[specIndex]
                if combinations == nil { combinations = CombinationIterator(spec.foreach) }
                if let bindings = combinations?.next() {
                    return TaskBuilder.build(spec, bindings: bindings, job: job)
                }
                combinations = nil
                specIndex += 1
            }
            return nil
        }
    }
}

/// Walks the cartesian product of `foreach` variables like an odometer: the last variable
/// turns fastest.
struct CombinationIterator {
    private let variables: [(name: String, source: ForeachSource)]
    private var iterators: [AnyIterator<String>] = []
    private var current: [String] = []
    private var started = false
    private var done = false

    init(_ variables: [(name: String, source: ForeachSource)]) {
        self.variables = variables
    }

    mutating func next() -> [String: String]? {
        guard !done else { return nil }
        if !started {
            started = true
            for variable in variables {
                let iterator = Self.values(of: variable.source)
                guard let first = iterator.next() else {
                    done = true
                    return nil
                }
                iterators.append(iterator)
                current.append(first)
            }
            return bindings()
        }
        var position = variables.count - 1
        while position >= 0 {
            if let value = iterators[position].next() {
                current[position] = value
                // Restart every faster-turning variable from its first value.
                for inner in (position + 1)..<variables.count {
                    let iterator = Self.values(of: variables[inner].source)
                    current[inner] = iterator.next() ?? ""
                    iterators[inner] = iterator
                }
                return bindings()
            }
            position -= 1
        }
        done = true
        return nil
    }

    private func bindings() -> [String: String] {
        Dictionary(uniqueKeysWithValues: zip(variables.map(\.name), current))
    }

    static func values(of source: ForeachSource) -> AnyIterator<String> {
        switch source {
        case .list(let values): return AnyIterator(values.makeIterator())
        case .range(let from, let to):
            return AnyIterator((from...to).lazy.map(String.init).makeIterator())
        case .lines(let url): return AnyIterator(LineReader(url: url))
        }
    }
}

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
            guard let built = try? URLBuilder.url(baseURL: job.baseURL, path: path, query: query)
            else {
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
            guard let data = try? Data(contentsOf: file) else {
                return error("bodyFile", "cannot read \(file.path)")
            }
            body = data
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
        return .success(
            ExpandedTask(
                id: id, request: request, expectStatus: spec.expectStatus, save: save,
                retry: spec.retry, specPath: spec.path))
    }
}

/// Renders a task's `json` with `{variable}` replaced in every string value.
enum JSONBody {
    static func value(of node: JSONNode, bindings: [String: String]) -> JSONWriter.Value {
        switch node.value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number):
            number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
        case .string(let text): .string(Template(text).render(bindings))
        case .array(let elements): .array(elements.map { value(of: $0, bindings: bindings) })
        case .object(let members):
            .object(members.map { ($0.key, value(of: $0.node, bindings: bindings)) })
        }
    }
}
