import Courier

/// Joins the tasks of a job through their captures, once every task is read: a `{name}` that is
/// no `foreach` variable must be some task's capture, a `{"capture": …}` source must exist, and
/// no task may wait, directly or not, for itself.
enum CaptureLinker {
    static func link(_ tasks: inout [TaskSpec], context: DecodingContext) {
        let producer = producers(of: tasks, context: context)
        // Every capture a task's `auth` uses is a credential: it is redacted like `${env:…}`.
        var credentials: Set<String> = []
        for index in tasks.indices {
            credentials.formUnion(
                resolveUses(of: &tasks[index], producer: producer, context: context))
        }
        for index in tasks.indices {
            for rule in tasks[index].captures.indices
            where credentials.contains(tasks[index].captures[rule].name) {
                tasks[index].captures[rule].secret = true
            }
        }
        for index in tasks.indices {
            tasks[index].refreshableToken = refreshableToken(
                of: tasks[index], in: tasks, producer: producer)
        }
        checkPrune(tasks, producer: producer, context: context)
        if let cycle = firstCycle(in: tasks, producer: producer) {
            let steps = cycle.map { step in
                "\(tasks[step.task].path) uses \"\(step.capture)\" of \(tasks[producer[step.capture]!].path)"
            }
            let message =
                cycle.count == 1
                ? "uses its own capture \"\(cycle[0].capture)\": a task cannot wait for itself"
                : "is in a cycle of captures: \(steps.joined(separator: ", ")); no task of it could start"
            context.error(tasks[cycle[0].task].path, message, at: nil)
        }
    }

    /// The task that captures each name. Capture names are job-wide: one task takes each.
    private static func producers(of tasks: [TaskSpec], context: DecodingContext) -> [String: Int] {
        var producer: [String: Int] = [:]
        for (index, spec) in tasks.enumerated() {
            for rule in spec.captures {
                if let other = producer[rule.name] {
                    context.error(
                        "\(spec.path).capture.\(rule.name)",
                        "\(tasks[other].path) already captures \"\(rule.name)\"; capture names are job-wide",
                        at: nil)
                } else {
                    producer[rule.name] = index
                }
            }
        }
        return producer
    }

    /// Whether a string of `node`, at any depth, holds `text`.
    private static func holds(_ text: String, _ node: JSONNode) -> Bool {
        switch node.value {
        case .string(let value): value.contains(text)
        case .array(let elements): elements.contains { holds(text, $0) }
        case .object(let members): members.contains { holds(text, $0.node) }
        default: false
        }
    }

    /// The variables courier gives a task of its own (`since`, `paginate`, `window`).
    /// (`{name}`: the key that gives it.)
    static let builtIns = [
        "since": "since", "page": "paginate", "windowStart": "window", "windowEnd": "window",
    ]

    /// Resolves a task's `{name}` uses against the captures (its inputs) and checks its
    /// `foreach` captures; the captures its `auth` uses, which are credentials.
    private static func resolveUses(
        of spec: inout TaskSpec, producer: [String: Int], context: DecodingContext
    ) -> Set<String> {
        var credentials: Set<String> = []
        for use in spec.unresolved {
            if producer[use.name] != nil {
                spec.inputs.insert(use.name)
                if use.key.hasPrefix("auth.") { credentials.insert(use.name) }
            } else if use.key == "json" || use.key == "body" {
                // A body's other braces are its own text (``TaskDecoder``).
                continue
            } else {
                // `${TOKEN}`, as a shell writes it: an environment variable was meant.
                let shell = Self.holds("${\(use.name)}", use.node)
                // A misspelt name (`{sinse}`) gets the name it is closest to (trial HH2).
                let known = Array(producer.keys) + spec.foreach.map(\.name) + Self.builtIns.keys
                let guess = shell ? nil : NodeReader.closest(to: use.name, in: known)
                // `{since}` on a task without `since` (a misspelt key, say) gets the key it
                // needs, not itself as a guess (trial JJ).
                let needs = Self.builtIns[use.name].map {
                    "; {\(use.name)} is a task's own with \"\($0)\", which this task has not"
                }
                context.error(
                    "\(spec.path).\(use.key)",
                    "uses {\(use.name)}, but the task has no foreach variable \"\(use.name)\" and no task captures it"
                        + (shell ? "; for an environment variable, write ${env:\(use.name)}" : "")
                        + (needs ?? guess.map { "; did you mean {\($0)}?" } ?? ""),
                    at: use.node)
            }
        }
        spec.unresolved = []
        for variable in spec.foreach {
            guard case .capture(let name) = variable.source else { continue }
            if producer[name] == nil {
                context.error(
                    "\(spec.path).foreach.\(variable.name).capture",
                    "no task captures \"\(name)\"", at: nil)
            }
            if spec.zip {
                context.error(
                    "\(spec.path).zip",
                    "cannot pair up captured values (their count is unknown until the run): drop zip or the capture",
                    at: nil)
            }
        }
        let captureSources = spec.foreach.filter {
            if case .capture = $0.source { true } else { false }
        }
        if captureSources.count > 1 {
            context.error(
                "\(spec.path).foreach",
                "takes more than one capture (\(captureSources.map(\.name).joined(separator: ", "))); fan out over one",
                at: nil)
        }
        if captureSources.count == 1, let source = spec.captureSource {
            checkFanOutID(spec, capture: source.capture, context: context)
        }
        return credentials
    }

    /// A fan-out's id must use each of its `foreach` variables that takes several values: one id
    /// is one task, so children whose ids are alike would be one child, and only the first
    /// value's would be sent, silently (trial GG). Checked here because a fan-out's ids are not
    /// expanded at validation (its values come with the run).
    private static func checkFanOutID(
        _ spec: TaskSpec, capture: String, context: DecodingContext
    ) {
        let used = Set(Template(spec.id).variables)
        let missing = spec.foreach.filter { variable in
            guard !used.contains(variable.name) else { return false }
            switch variable.source {
            case .capture, .lines: return true
            case .list(let values): return Set(values).count > 1
            case .range(let low, let high): return low < high
            }
        }
        guard !missing.isEmpty else { return }
        let names = missing.map { "\"\($0.name)\"" }.joined(separator: ", ")
        let uses = missing.map { "{\($0.name)}" }.joined(separator: "-")
        context.error(
            "\(spec.path).id",
            "\"\(spec.id)\" leaves out \(names), which take\(missing.count == 1 ? "s" : "") several values in a fan-out over \"\(capture)\": children would share an id, and only the first of each would be sent; put \(missing.map { "{\($0.name)}" }.joined(separator: " and ")) in the id (\"\(spec.id)-\(uses)\")",
            at: nil)
    }

    /// `prune` reads its parent's listing as every item that exists: an incremental one
    /// (`since`) lists only what changed, and everything else would look gone.
    private static func checkPrune(
        _ tasks: [TaskSpec], producer: [String: Int], context: DecodingContext
    ) {
        for spec in tasks where spec.prune != nil {
            guard let source = spec.captureSource, let parent = producer[source.capture],
                tasks[parent].since != nil
            else { continue }
            context.error(
                "\(spec.path).prune",
                "cannot follow \(tasks[parent].path), an incremental listing (since): it lists only what changed, so every other item would look gone; prune under a task that lists every item",
                at: nil)
        }
    }

    /// The one capture a task's `auth` uses, when its producer can simply be sent again: a
    /// login task of one request that waits for nothing.
    private static func refreshableToken(
        of spec: TaskSpec, in tasks: [TaskSpec], producer: [String: Int]
    ) -> String? {
        guard let auth = spec.auth else { return nil }
        let used = Set(
            auth.templates.flatMap { Template($0.text).variables }.filter {
                spec.inputs.contains($0)
            })
        guard used.count == 1, let name = used.first, let login = producer[name] else {
            return nil
        }
        let source = tasks[login]
        guard source.foreach.isEmpty, source.paginate == nil, source.inputs.isEmpty else {
            return nil
        }
        return name
    }

    /// The names a task waits for: its `{name}` inputs and the capture it fans out over.
    static func dependencies(of spec: TaskSpec) -> [String] {
        var names = spec.inputs.sorted()
        if let source = spec.captureSource, !names.contains(source.capture) {
            names.append(source.capture)
        }
        return names
    }

    /// One cycle of tasks waiting on one another's captures, as (task, capture it waits for)
    /// steps, or `nil`.
    private static func firstCycle(in tasks: [TaskSpec], producer: [String: Int])
        -> [(task: Int, capture: String)]?
    {
        enum Mark { case visiting, done }
        var marks: [Int: Mark] = [:]
        var stack: [(task: Int, capture: String)] = []
        func visit(_ task: Int) -> [(task: Int, capture: String)]? {
            marks[task] = .visiting
            for name in dependencies(of: tasks[task]) {
                guard let next = producer[name] else { continue }
                stack.append((task, name))
                if marks[next] == .visiting {
                    let start = stack.firstIndex { $0.task == next } ?? 0
                    return Array(stack[start...])
                }
                if marks[next] == nil, let cycle = visit(next) { return cycle }
                stack.removeLast()
            }
            marks[task] = .done
            return nil
        }
        for task in tasks.indices where marks[task] == nil {
            if let cycle = visit(task) { return cycle }
        }
        return nil
    }
}

extension Authentication {
    /// The strings of a task's `auth`, by key, for template checks.
    var templates: [(key: String, text: String)] {
        switch self {
        case .bearer(let token): [("bearer", token)]
        case .basic(let user, let password): [("basic.user", user), ("basic.password", password)]
        case .header(let name, let value): [("name", name), ("header.value", value)]
        case .query(let name, let value): [("name", name), ("query.value", value)]
        case .provider: []
        }
    }

    /// The credentials with `{variable}` replaced.
    func rendered(_ bindings: [String: String]) -> Authentication {
        func render(_ text: String) -> String { Template(text).render(bindings) }
        switch self {
        case .bearer(let token): return .bearer(render(token))
        case .basic(let user, let password):
            return .basic(user: render(user), password: render(password))
        case .header(let name, let value): return .header(name: name, value: render(value))
        case .query(let name, let value): return .query(name: name, value: render(value))
        case .provider: return self
        }
    }
}
