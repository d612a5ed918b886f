import Courier
import Foundation

/// Reads one entry of `tasks` strictly. Each concern reads its keys in its own file
/// (`TaskDecoder+Foreach`, `+Request`, `+Body`, `+Expectations`, `+Output`, `+Captures`,
/// `+Auth`, `+Pagination`, `+Records`); which keys exist and how each is read is ``JobKeys/task``.
///
/// Keys are read in a fixed order, and errors are reported in the order they are found, so
/// the order of the calls in ``decode()`` is part of what the user sees.
struct TaskDecoder {
    static let methods: [HTTPMethod] = [
        .get, .head, .post, .put, .patch, .delete, .options, .trace,
    ]

    var reader: NodeReader
    let node: JSONNode
    let path: String
    let defaults: TaskDefaults
    let context: DecodingContext
    /// The task's `foreach` variables, once read.
    var variables = Set<String>()
    /// Whether the task has a `paginate` rule, once read: `{page}` is then known in `save`.
    var paginated = false
    /// Names that are not foreach variables may be other tasks' captures: the job resolves
    /// them once every task is read (``CaptureLinker``).
    var unresolved: [(name: String, key: String, node: JSONNode)] = []

    static func decode(
        _ node: JSONNode, path: String, defaults: TaskDefaults, context: DecodingContext
    ) -> TaskSpec? {
        guard let reader = NodeReader(node, path: path, keys: JobKeys.task, context: context)
        else { return nil }
        var decoder = TaskDecoder(
            reader: reader, node: node, path: path, defaults: defaults, context: context)
        return decoder.decode()
    }

    private mutating func decode() -> TaskSpec {
        _ = reader.take("description")
        var (foreach, zip) = readForeach()
        let window = readWindow(foreach: foreach)
        let paginate = readPaginate()
        let since = readSince()
        let id = readID()
        if let window { (foreach, zip) = windowVariables(window, id: id) }
        let method = readMethod()
        let target = readTarget()
        let query = readQuery()
        let headers = readHeaders()
        let body = readBody(method: method)
        if let paginate, paginate.movesInBody { checkBodyPages(paginate, body: body) }
        let (expectStatus, expectation) = readExpect()
        let save = readSave()
        let prune = readPrune(
            save: save,
            fansOut: foreach.contains { if case .capture = $0.source { true } else { false } },
            incremental: since != nil || window != nil)
        let conditional = readConditional(save: save)
        let captures = readCaptures(save: save, conditional: conditional)
        let records = readRecords(conditional: conditional, paginated: paginate != nil)
        // A `save` or `records` with an error of its own keeps what it fetches all the same: the
        // cursor's refusal would be an error that follows from that one (trial HH).
        checkSince(
            since, id: id,
            keeps: reader.has("save") || reader.has("records") || !captures.isEmpty)
        if prune != nil, conditional, paginate != nil { refusePrunedConditionalListing(at: node) }
        if window != nil, records?.write == .replace {
            context.error(
                "\(path).records.write",
                "\"replace\" keeps only one run's records, and a window task's runs fetch new windows only: use \"merge\" (or \"append\")",
                at: node)
        }
        let auth = readAuth()
        let writes = readWrites(method: method)
        JobDecoder.addLiteralCredentials(
            headers.filter { Template($0.value).variables.isEmpty }.map {
                ($0.name, Template($0.value).render([:]))
            }, context: context)
        let retry = readRetry(writes: writes)
        let timeout =
            reader.number("timeout", range: 0.001...86_400, what: "seconds greater than 0")
            ?? defaults.timeout
        let responseRules =
            reader.take("onResponse").map {
                JobDecoder.decodeResponseRules($0, path: "\(path).onResponse", context: context)
                    ?? []
            } ?? defaults.responseRules
        let checksNode = reader.take("checks")
        let checks = checksNode.flatMap {
            JobDecoder.decodeChecks($0, path: "\(path).checks", job: false, context: context)
        }
        if checks?.minRecords != nil, records == nil, let checksNode {
            reader.fail(
                "checks", "minRecords needs the task's \"records\": there are no records to count",
                at: checksNode)
        }
        reader.rejectUnknownKeys()
        var spec = TaskSpec(
            id: id, method: method, target: target, query: query, headers: headers,
            body: body, expectStatus: expectStatus, expectation: expectation,
            paginate: paginate, conditional: conditional, save: save, foreach: foreach,
            zip: zip, retry: retry, timeout: timeout, path: path)
        spec.captures = captures
        spec.records = records
        spec.auth = auth?.credentials
        spec.oauth2 = auth?.oauth2
        spec.since = since
        spec.prune = prune
        spec.unresolved = unresolved
        spec.position = (node.line, node.column)
        spec.responseRules = responseRules
        spec.window = window
        spec.checks = checks ?? DataChecks()
        spec.writes = writes
        spec.compiled = CompiledTemplates(spec)
        return spec
    }

    /// `retry`, the job's when the task has none. A key lets the server recognise a repeat,
    /// and a safe request has no effect to repeat: both are retried like an idempotent method.
    private mutating func readRetry(writes: WriteSettings) -> RetryPolicy {
        var retry =
            reader.take("retry").map {
                JobDecoder.decodeRetry(
                    $0, path: "\(path).retry", base: defaults.retry, context: context)
            } ?? defaults.retry
        if writes.keyHeader != nil || writes.safe == true { retry.retriesNonIdempotent = true }
        return retry
    }

    /// Records the `{names}` in `text` that are not the task's variables, for ``CaptureLinker``.
    mutating func checkVariables(_ text: String, key: String, at valueNode: JSONNode?) {
        // `{page}` in `save` is the page number of a paginated task.
        let known = paginated && key == "save" ? variables.union(["page"]) : variables
        for name in Template(text).variables where !known.contains(name) {
            unresolved.append((name, key, valueNode ?? node))
        }
        for name in Self.unclosed(in: text) where known.contains(name) {
            context.note(
                "\(path).\(key)",
                "\"{\(name)\" is not closed, so it is sent as text; did you mean {\(name)}?",
                at: valueNode ?? node)
        }
    }

    /// The names after a `{` that no `}` closes (`/items/{n.json`): a task's variable written
    /// so is text (other braces are), which a warning says (trial EEE: three tasks went to
    /// the same `…/%7Bn.json` without a word).
    /// `text` with a `}` after each variable whose brace is not closed (``unclosed(in:)``):
    /// `o/{n.json` → `o/{n}.json`, the fix a message suggests.
    static func closingBraces(in text: String) -> String {
        var fixed = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            fixed += rest[..<open]
            rest = rest[rest.index(after: open)...]
            if rest.first == "{" {
                fixed += "{{"
                rest = rest.dropFirst()
                continue
            }
            let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            rest = rest.dropFirst(name.count)
            fixed += "{" + name
            if !name.isEmpty, rest.first != "}" { fixed += "}" }
        }
        return fixed + rest
    }

    static func unclosed(in text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            rest = rest[rest.index(after: open)...]
            // `{{` is an escaped brace (``Template``): its text is meant.
            if rest.first == "{" {
                rest = rest.dropFirst()
                continue
            }
            let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            let after = rest.dropFirst(name.count).first
            if !name.isEmpty, after != "}" { names.append(String(name)) }
        }
        return names
    }
}
