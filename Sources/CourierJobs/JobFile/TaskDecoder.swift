import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads one entry of `tasks` strictly.
enum TaskDecoder {
    static let methods: [HTTPMethod] = [
        .get, .head, .post, .put, .patch, .delete, .options, .trace,
    ]

    static func decode(
        _ node: JSONNode, path: String, defaults: TaskDefaults, context: DecodingContext
    ) -> TaskSpec? {
        guard var reader = NodeReader(node, path: path, context: context) else { return nil }
        _ = reader.take("description")
        let foreach =
            reader.take("foreach").map {
                decodeForeach(
                    $0, path: "\(path).foreach", folder: defaults.jobFolder, context: context)
            } ?? []
        let variables = Set(foreach.map(\.name))
        let zipNode = reader.take("zip")
        let zip = reader.bool("zip") ?? false
        if !Self.countFits(foreach, zip: zip) {
            context.error(
                "\(path).foreach",
                "expands to more than 9223372036854775807 tasks (the product of its variables); no run can go through them",
                at: node)
        }
        if zip, foreach.count < 2, let zipNode {
            reader.fail("zip", "needs at least two foreach variables to pair up", at: zipNode)
        }
        let paginate = reader.take("paginate").flatMap {
            decodePaginate($0, path: "\(path).paginate", context: context)
        }
        // Names that are not foreach variables may be other tasks' captures: the job resolves
        // them once every task is read (``CaptureLinker``).
        var unresolved: [(name: String, key: String, node: JSONNode)] = []
        func checkVariables(_ text: String, key: String, at valueNode: JSONNode?) {
            // `{page}` in `save` is the page number of a paginated task.
            let known = paginate != nil && key == "save" ? variables.union(["page"]) : variables
            for name in Template(text).variables where !known.contains(name) {
                unresolved.append((name, key, valueNode ?? node))
            }
        }

        let idNode = reader.take("id")
        let id = reader.string("id", required: true, env: false) ?? ""
        if idNode != nil, id.isEmpty { reader.fail("id", "may not be empty", at: idNode!) }
        checkVariables(id, key: "id", at: idNode)

        var method = HTTPMethod.get
        if let methodNode = reader.take("method"), let text = reader.string("method", env: false) {
            if let known = methods.first(where: { $0.rawValue == text }) {
                method = known
            } else {
                let hint =
                    methods.first { $0.rawValue == text.uppercased() }.map {
                        "; did you mean \"\($0)\"?"
                    } ?? ""
                reader.fail(
                    "method",
                    "unknown method \"\(text)\", expected one of \(methods.map(\.rawValue).joined(separator: ", "))\(hint)",
                    at: methodNode)
            }
        }

        let pathNode = reader.take("path")
        let urlNode = reader.take("url")
        var target = TaskSpec.Target.path("/")
        switch (reader.string("path", template: true), reader.string("url", template: true)) {
        case (let value?, nil):
            if !defaults.hasBaseURL {
                reader.fail(
                    "path", "needs the job's \"baseURL\" (or use \"url\" for an absolute URL)",
                    at: pathNode!)
            }
            checkVariables(value, key: "path", at: pathNode)
            target = .path(value)
        case (nil, let value?):
            checkVariables(value, key: "url", at: urlNode)
            if Template(value).variables.isEmpty, JobDecoder.httpURL(value) == nil {
                reader.fail(
                    "url", "expected an absolute http or https URL, found \"\(value)\"",
                    at: urlNode!)
            }
            target = .url(value)
        case (.some, .some):
            context.error(path, "has both \"path\" and \"url\"; give one", at: node)
        case (nil, nil):
            if pathNode == nil && urlNode == nil {
                context.error(path, "needs \"path\" (joined to baseURL) or \"url\"", at: node)
            }
        }

        let query = reader.stringMap("query", template: true) ?? []
        for item in query { checkVariables(item.value, key: "query.\(item.name)", at: nil) }
        let headers = reader.stringMap("headers", template: true) ?? []
        JobDecoder.validateHeaderNames(headers, path: "\(path).headers", at: node, context: context)
        for header in headers {
            checkVariables(header.value, key: "headers.\(header.name)", at: nil)
        }

        var bodies: [TaskSpec.Body] = []
        if let json = reader.take("json") {
            bodies.append(
                .json(resolveEnvironment(in: json, path: "\(path).json", context: context)))
        }
        if let text = reader.string("body", template: true) { bodies.append(.text(text)) }
        if let fileNode = reader.take("bodyFile"), let name = reader.string("bodyFile", env: false)
        {
            let url = URL(fileURLWithPath: name, relativeTo: defaults.jobFolder)
            if let problem = FileSystem.notRegularFile(url) {
                reader.fail("bodyFile", "\"\(name)\": \(problem)", at: fileNode)
            }
            bodies.append(.file(url))
        }
        if bodies.count > 1 {
            context.error(
                path, "has more than one of \"json\", \"body\" and \"bodyFile\"; give one", at: node
            )
        }
        if !bodies.isEmpty, method == .get || method == .head {
            // Both transports refuse one (WireRequest): say so before the run, not per task.
            context.error(
                path,
                "has a body but its method is \(method) (GET is the default): a \(method) request "
                    + "cannot carry a body; set \"method\" (POST, PUT, PATCH…)",
                at: node)
        }

        var expectStatus: Set<Int>?
        var expectation = Expectation()
        if let expectNode = reader.take("expect"),
            var expect = NodeReader(expectNode, path: "\(path).expect", context: context)
        {
            if let statuses = expect.take("status") {
                expectStatus = JobDecoder.statusSet(
                    statuses, path: "\(path).expect.status", context: context)
            }
            expectation = decodeExpectation(&expect, path: "\(path).expect", context: context)
            expect.rejectUnknownKeys(known: ["status", "json", "headers", "bodyContains", "maxMs"])
        }

        let saveNode = reader.take("save")
        let save = reader.string("save", env: false)
        if let save, let saveNode {
            checkVariables(save, key: "save", at: saveNode)
            if let problem = OutputPath.problem(with: save) {
                reader.fail("save", problem, at: saveNode)
            }
        }

        let conditionalNode = reader.take("conditional")
        let conditional = reader.bool("conditional") ?? false
        if conditional, save == nil, let conditionalNode {
            reader.fail(
                "conditional",
                "needs \"save\": the validators belong to a saved output", at: conditionalNode)
        }
        if conditional, paginate != nil, let conditionalNode {
            reader.fail("conditional", "cannot be combined with paginate", at: conditionalNode)
        }

        let captureNode = reader.take("capture")
        let captures =
            captureNode.map { decodeCaptures($0, path: "\(path).capture", context: context) } ?? []
        if conditional, !captures.isEmpty, let captureNode {
            reader.fail(
                "capture", "cannot be combined with conditional: a 304 has no body to capture from",
                at: captureNode)
        }
        if save != nil, captures.contains(where: \.secret), let captureNode {
            reader.fail(
                "capture",
                "a secret capture's task may not save its body: the secret would be written to disk",
                at: captureNode)
        }
        let auth = reader.take("auth").flatMap {
            JobDecoder.decodeAuth($0, path: "\(path).auth", template: true, context: context)
        }
        for (key, text) in auth?.templates ?? [] where key != "name" {
            checkVariables(text, key: "auth.\(key)", at: nil)
            // A literal credential is a secret like the job's own; a template's values are
            // secret when their captures are (every capture used in auth is made one).
            if Template(text).variables.isEmpty { context.addSecret(text) }
        }
        if case .basic(let user, let password) = auth, Template(user).variables.isEmpty,
            Template(password).variables.isEmpty
        {
            context.addSecret(
                JobDecoder.basicCredential(
                    Template.restoringBraces(user), Template.restoringBraces(password)))
        }
        JobDecoder.addLiteralCredentials(
            headers.filter { Template($0.value).variables.isEmpty }.map {
                ($0.name, Template.restoringBraces($0.value))
            }, context: context)

        let retry =
            reader.take("retry").map {
                JobDecoder.decodeRetry(
                    $0, path: "\(path).retry", base: defaults.retry, context: context)
            } ?? defaults.retry
        let timeout =
            reader.number("timeout", range: 0.001...86_400, what: "seconds greater than 0")
            ?? defaults.timeout
        reader.rejectUnknownKeys(known: JobDecoder.taskKeys)
        var spec = TaskSpec(
            id: id, method: method, target: target, query: query, headers: headers,
            body: bodies.first, expectStatus: expectStatus, expectation: expectation,
            paginate: paginate, conditional: conditional, save: save, foreach: foreach,
            zip: zip, retry: retry, timeout: timeout, path: path)
        spec.captures = captures
        spec.auth = auth
        spec.unresolved = unresolved
        spec.compiled = CompiledTemplates(spec)
        return spec
    }

    /// `capture`: name → `{"json": "/pointer"}` or `{"header": "Name"}`, with `"secret": true`
    /// optional.
    static func decodeCaptures(_ node: JSONNode, path: String, context: DecodingContext)
        -> [CaptureRule]
    {
        guard case .object(let members) = node.value, !members.isEmpty else {
            context.error(
                path,
                "expected an object of captures (name → {\"json\": \"/pointer\"} or {\"header\": \"Name\"}), found \(node.value.typeName)",
                at: node)
            return []
        }
        var rules: [CaptureRule] = []
        for member in members {
            let memberPath = "\(path).\(member.key)"
            guard Template.isIdentifier(Array(member.key.utf8)[...]) else {
                context.error(
                    memberPath,
                    "capture names are letters, digits and '_', not starting with a digit",
                    at: member.node)
                continue
            }
            guard var reader = NodeReader(member.node, path: memberPath, context: context) else {
                continue
            }
            defer { reader.rejectUnknownKeys(known: ["json", "header", "secret"]) }
            let secret = reader.bool("secret") ?? false
            let jsonNode = reader.take("json")
            let headerNode = reader.take("header")
            switch (reader.string("json", env: false), reader.string("header", env: false)) {
            case (let pointer?, nil):
                guard JSONPointer.isValid(pointer) else {
                    reader.fail(
                        "json",
                        "expected a JSON Pointer such as \"/items/*/id\", found \"\(pointer)\"",
                        at: jsonNode!)
                    continue
                }
                rules.append(CaptureRule(name: member.key, source: .json(pointer), secret: secret))
            case (nil, let name?):
                guard HTTPMethod(name).isValidToken else {
                    reader.fail("header", "\"\(name)\" is not a valid header name", at: headerNode!)
                    continue
                }
                rules.append(CaptureRule(name: member.key, source: .header(name), secret: secret))
            default:
                context.error(
                    memberPath, "expected exactly one of \"json\" (a JSON Pointer) or \"header\"",
                    at: member.node)
            }
        }
        return rules
    }

    /// `paginate`: one `next` rule, `stopWhen.empty`, `maxPages`.
    static func decodePaginate(_ node: JSONNode, path: String, context: DecodingContext)
        -> PaginationRule?
    {
        guard var reader = NodeReader(node, path: path, context: context) else { return nil }
        defer { reader.rejectUnknownKeys(known: ["next", "stopWhen", "maxPages"]) }
        let forms =
            "one of {\"linkHeader\": \"next\"}, {\"json\": \"/next\"}, {\"cursor\": {\"json\": \"/cursor\", \"param\": \"cursor\"}}, {\"page\": {\"param\": \"page\", \"start\": 1}}, {\"offset\": {\"param\": \"offset\", \"step\": 100}}"
        guard let nextNode = reader.take("next"), case .object(let members) = nextNode.value,
            members.count == 1, let member = members.first
        else {
            context.error("\(path).next", "is required: \(forms)", at: node)
            return nil
        }
        func pointer(_ text: String?, at place: String, _ at: JSONNode) -> String? {
            guard let text, JSONPointer.isValid(text) else {
                context.error(place, "expected a JSON Pointer such as \"/next\"", at: at)
                return nil
            }
            return text
        }
        var next: PaginationRule.Next?
        switch member.key {
        case "linkHeader":
            if case .string(let relation) = member.node.value, !relation.isEmpty {
                next = .linkHeader(relation)
            } else {
                context.error(
                    "\(path).next.linkHeader", "expected a link relation such as \"next\"",
                    at: member.node)
            }
        case "json":
            if case .string(let text) = member.node.value {
                next = pointer(text, at: "\(path).next.json", member.node).map { .jsonURL($0) }
            } else {
                context.error(
                    "\(path).next.json", "expected a JSON Pointer such as \"/next\"",
                    at: member.node)
            }
        case "cursor", "page", "offset":
            guard
                var inner = NodeReader(
                    member.node, path: "\(path).next.\(member.key)", context: context)
            else { return nil }
            let parameter = inner.string("param", required: true, env: false) ?? member.key
            switch member.key {
            case "cursor":
                let text = inner.string("json", required: true, env: false)
                if let found = pointer(text, at: "\(path).next.cursor.json", member.node) {
                    next = .cursor(pointer: found, parameter: parameter)
                }
                inner.rejectUnknownKeys(known: ["json", "param"])
            case "page":
                let start =
                    inner.integer("start", range: 0...1_000_000, what: "a whole number from 0") ?? 1
                next = .page(parameter: parameter, start: start)
                inner.rejectUnknownKeys(known: ["param", "start"])
            default:
                if let step = inner.integer(
                    "step", range: 1...1_000_000, what: "a whole number from 1")
                {
                    next = .offset(parameter: parameter, step: step)
                } else {
                    context.error(
                        "\(path).next.offset.step", "is required (items per page)", at: member.node)
                }
                inner.rejectUnknownKeys(known: ["param", "step"])
            }
        default:
            context.error(
                "\(path).next", "unknown rule \"\(member.key)\": \(forms)", at: member.node)
        }
        var stopWhenEmpty: String?
        if let stopNode = reader.take("stopWhen") {
            var stop = NodeReader(stopNode, path: "\(path).stopWhen", context: context)
            stopWhenEmpty = pointer(
                stop?.string("empty", required: true, env: false), at: "\(path).stopWhen.empty",
                stopNode)
            stop?.rejectUnknownKeys(known: ["empty"])
        }
        let maxPages =
            reader.integer(
                "maxPages", range: 1...1_000_000, what: "a whole number from 1 to 1000000") ?? 1000
        guard let next else { return nil }
        switch next {
        case .page, .offset:
            if stopWhenEmpty == nil {
                context.error(
                    "\(path).stopWhen",
                    "is required for page numbers and offsets: {\"empty\": \"/items\"} says where the page's items are, and an empty page ends",
                    at: node)
            }
        default: break
        }
        return PaginationRule(next: next, stopWhenEmpty: stopWhenEmpty, maxPages: maxPages)
    }

    /// `expect.json`, `expect.headers`, `expect.bodyContains` and `expect.maxMs`.
    static func decodeExpectation(
        _ expect: inout NodeReader, path: String, context: DecodingContext
    ) -> Expectation {
        var expectation = Expectation()
        if let json = expect.take("json") {
            if case .object(let members) = json.value {
                for member in members {
                    if JSONPointer.isValid(member.key) {
                        expectation.json.append((member.key, member.node))
                    } else {
                        context.error(
                            "\(path).json",
                            "\"\(member.key)\" is not a JSON Pointer (expected \"\" or a path starting with /, like \"/status\")",
                            at: member.node)
                    }
                }
            } else {
                expect.fail(
                    "json",
                    "expected an object of JSON Pointer to value, like {\"/status\": \"done\"}, found \(json.value.typeName)",
                    at: json)
            }
        }
        if let headers = expect.stringMap("headers") {
            for header in headers where !WireRequest.isToken(header.name) {
                context.error(
                    "\(path).headers", "\"\(header.name)\" is not a header name", at: expect.node)
            }
            expectation.headers = headers.map { ($0.name, $0.value) }
        }
        if let contains = expect.take("bodyContains") {
            switch contains.value {
            case .string(let text):
                expectation.bodyContains = [text]
            case .array(let elements)
            where elements.allSatisfy({ if case .string = $0.value { true } else { false } }):
                expectation.bodyContains = elements.compactMap {
                    if case .string(let text) = $0.value { text } else { nil }
                }
            default:
                expect.fail(
                    "bodyContains",
                    "expected a string or an array of strings, found \(contains.value.typeName)",
                    at: contains)
            }
        }
        expectation.maxMs = expect.number(
            "maxMs", range: 0.001...86_400_000, what: "milliseconds greater than 0")
        return expectation
    }

    /// Why `url` cannot be a file of lines: a folder reads as nothing (a run of 0 tasks that
    /// looks fine) and a device such as /dev/zero never ends.
    static func linesFileProblem(_ url: URL) -> String? {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return "is a folder, not a file of lines"
        case S_IFCHR, S_IFBLK: return "is a device, not a file of lines"
        case S_IFSOCK: return "is a socket, not a file of lines"
        default: return nil
        }
    }

    static func decodeForeach(
        _ node: JSONNode, path: String, folder: URL, context: DecodingContext
    ) -> [(name: String, source: ForeachSource)] {
        guard case .object(let members) = node.value, !members.isEmpty else {
            context.error(
                path, "expected an object of variables, found \(node.value.typeName)", at: node)
            return []
        }
        var result: [(name: String, source: ForeachSource)] = []
        for member in members {
            let memberPath = "\(path).\(member.key)"
            guard Template.isIdentifier(Array(member.key.utf8)[...]) else {
                context.error(
                    memberPath,
                    "variable names are letters, digits and '_', not starting with a digit",
                    at: member.node)
                continue
            }
            switch member.node.value {
            case .array(let values):
                var list: [String] = []
                for (index, value) in values.enumerated() {
                    switch value.value {
                    case .string(let text): list.append(text)
                    case .number: list.append(value.numberSource ?? "")
                    default:
                        context.error(
                            "\(memberPath)[\(index)]",
                            "expected a string or number, found \(value.value.typeName)", at: value)
                    }
                }
                result.append((member.key, .list(list)))
            case .object:
                guard var reader = NodeReader(member.node, path: memberPath, context: context)
                else { continue }
                let declared = result.count
                if let range = reader.take("range") {
                    // Bounds are read from their source text: a Double cannot hold 2^63 - 1.
                    if case .array(let bounds) = range.value, bounds.count == 2,
                        let low = Self.wholeNumber(bounds[0]),
                        let high = Self.wholeNumber(bounds[1]), low <= high
                    {
                        if high.subtractingReportingOverflow(low).overflow
                            || (high - low).addingReportingOverflow(1).overflow
                        {
                            context.error(
                                "\(memberPath).range",
                                "holds more than 9223372036854775807 values; no run can go through them",
                                at: range)
                        }
                        result.append((member.key, .range(low, high)))
                    } else if case .array(let bounds) = range.value, bounds.count == 2,
                        bounds.allSatisfy({ if case .number = $0.value { true } else { false } }),
                        bounds.contains(where: { Self.wholeNumber($0) == nil })
                    {
                        context.error(
                            "\(memberPath).range",
                            "expected whole numbers from -9223372036854775808 to 9223372036854775807, found \(bounds.map { $0.numberSource ?? "?" }.joined(separator: " and "))",
                            at: range)
                    } else {
                        context.error(
                            "\(memberPath).range",
                            "expected [from, to]: two whole numbers with from ≤ to", at: range)
                    }
                } else if let captureNode = reader.take("capture") {
                    if case .string(let name) = captureNode.value,
                        Template.isIdentifier(Array(name.utf8)[...])
                    {
                        result.append((member.key, .capture(name)))
                    } else {
                        context.error(
                            "\(memberPath).capture",
                            "expected the name of another task's capture, found \(reader.describe(captureNode))",
                            at: captureNode)
                    }
                } else if let linesNode = reader.take("lines") {
                    if case .string(let name) = linesNode.value {
                        let url = URL(fileURLWithPath: name, relativeTo: folder)
                        if let problem = Self.linesFileProblem(url) {
                            context.error(
                                "\(memberPath).lines", "\"\(name)\" \(problem)", at: linesNode)
                        } else if FileManager.default.isReadableFile(atPath: url.path) {
                            result.append((member.key, .lines(url)))
                        } else {
                            context.error(
                                "\(memberPath).lines",
                                "cannot read \"\(name)\" (looked at \(url.path))", at: linesNode)
                        }
                    } else {
                        context.error(
                            "\(memberPath).lines",
                            "expected a file name, found \(linesNode.value.typeName)", at: linesNode
                        )
                    }
                } else {
                    context.error(
                        memberPath,
                        "expected {\"range\": [from, to]}, {\"lines\": \"file\"} or {\"capture\": \"name\"}",
                        at: member.node)
                }
                reader.rejectUnknownKeys(known: ["range", "lines", "capture"])
                // A bad source still declares its variable, so its uses are not errors too.
                if result.count == declared { result.append((member.key, .list([]))) }
            default:
                context.error(
                    memberPath,
                    "expected a list of values, {\"range\": [from, to]} or {\"lines\": \"file\"}, found \(member.node.value.typeName)",
                    at: member.node)
            }
        }
        return result
    }

    /// Whether the task count fits an `Int`: the product of the variables' sizes, or with
    /// `zip` (values taken together) each size alone. Lines files, whose size is unknown here,
    /// count as one.
    static func countFits(_ foreach: [(name: String, source: ForeachSource)], zip: Bool) -> Bool {
        var count = 1
        for variable in foreach {
            let size: Int
            switch variable.source {
            case .list(let values): size = max(1, values.count)
            case .range(let from, let to):
                let (span, overflow) = to.subtractingReportingOverflow(from)
                guard !overflow, span < Int.max else { return false }
                size = span + 1
            case .lines, .capture: size = 1
            }
            guard !zip else { continue }
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else { return false }
            count = product
        }
        return true
    }

    /// A JSON number as a whole `Int`, from its source text (`12`, `-3`, `1e3`), or `nil` when
    /// it is not whole or does not fit.
    static func wholeNumber(_ node: JSONNode) -> Int? {
        guard case .number(let value) = node.value else { return nil }
        if let text = node.numberSource, let exact = Int(text) { return exact }
        // Exponent forms (`1e3`): through the Double, where it is exact.
        guard abs(value) < 9.2e18, let exact = Int(exactly: value) else { return nil }
        return exact
    }

    /// The JSON body with `${env:…}` resolved in every string.
    static func resolveEnvironment(in node: JSONNode, path: String, context: DecodingContext)
        -> JSONNode
    {
        var copy = node
        switch node.value {
        case .string(let text):
            copy.value = .string(
                context.resolveEnvironment(text, path: path, at: node, template: true))
        case .array(let elements):
            copy.value = .array(
                elements.enumerated().map {
                    resolveEnvironment(in: $1, path: "\(path)[\($0)]", context: context)
                })
        case .object(let members):
            copy.value = .object(
                members.map {
                    (
                        $0.key,
                        resolveEnvironment(in: $0.node, path: "\(path).\($0.key)", context: context)
                    )
                })
        default:
            break
        }
        return copy
    }
}
