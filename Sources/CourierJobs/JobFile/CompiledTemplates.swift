/// A task's templates, parsed once when the job is read rather than once per expanded task.
struct CompiledTemplates: Sendable {
    var id: Template
    var target: Template
    var query: [(name: String, value: Template)]
    var headers: [(name: String, value: Template)]
    var save: Template?
    /// `records.to`.
    var recordsTo: Template?
    /// A `body` text; `json` bodies render their strings as they walk the tree.
    var body: Template?

    init(_ spec: TaskSpec) {
        id = Template(spec.id)
        switch spec.target {
        case .path(let text), .url(let text): target = Template(text)
        }
        query = spec.query.map { ($0.name, Template($0.value)) }
        headers = spec.headers.map { ($0.name, Template($0.value)) }
        save = spec.save.map(Template.init)
        recordsTo = spec.records.map { Template($0.to) }
        if case .text(let text) = spec.body { body = Template(text) } else { body = nil }
    }
}
